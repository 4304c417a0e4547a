/** Links to a plan's files from the CI variables of GitHub Actions and GitLab CI. */
import { describe, expect, it } from 'vitest';
import { commitUrl, fileUrl, repositoryLinks } from '../../engine/plan/file-links.ts';

const COMMIT = 'a'.repeat(40);
const GITHUB = { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/contracts' };
const GITLAB = { CI_SERVER_URL: 'https://gitlab.example.com', CI_PROJECT_PATH: 'platform/legal/contracts' };

describe('repositoryLinks', () => {
  it.each([
    ['GitHub', GITHUB, { host: 'github', web: 'https://github.com/acme/contracts', prefix: '' }],
    [
      'GitHub Enterprise Server',
      { GITHUB_SERVER_URL: 'https://git.example.com/', GITHUB_REPOSITORY: 'acme/contracts' },
      { host: 'github', web: 'https://git.example.com/acme/contracts', prefix: '' },
    ],
    [
      'GitLab, from CI_PROJECT_URL',
      { CI_PROJECT_URL: 'https://gitlab.example.com/platform/contracts' },
      { host: 'gitlab', web: 'https://gitlab.example.com/platform/contracts', prefix: '' },
    ],
    ['GitLab, from CI_SERVER_URL and CI_PROJECT_PATH', GITLAB, { host: 'gitlab', web: 'https://gitlab.example.com/platform/legal/contracts', prefix: '' }],
  ])('%s', (_name, env, expected) => {
    expect(repositoryLinks(env)).toEqual(expected);
  });

  it.each([
    ['no CI variables', {}],
    ['GITHUB_REPOSITORY without a server', { GITHUB_REPOSITORY: 'acme/contracts' }],
    ['a server that is not http(s)', { GITHUB_SERVER_URL: 'javascript:alert(1)', GITHUB_REPOSITORY: 'acme/contracts' }],
    ['a server with credentials', { CI_PROJECT_URL: 'https://gitlab-ci-token:secret@gitlab.example.com/a/b' }],
    ['a server with a query', { CI_PROJECT_URL: 'https://gitlab.example.com/a/b?x=1' }],
    ['a repository that is not a path', { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/contracts) [x](https://evil.example' }],
    ['a repository without an owner', { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'contracts' }],
  ])('none with %s', (_name, env) => {
    expect(repositoryLinks(env)).toBeUndefined();
  });

  it('keeps where the files are in the repository, and refuses a directory outside it', () => {
    expect(repositoryLinks(GITHUB, 'infra/contract-sync')?.prefix).toBe('infra/contract-sync/');
    expect(repositoryLinks(GITHUB, './infra/')?.prefix).toBe('infra/');
    expect(repositoryLinks(GITHUB, '../elsewhere')).toBeUndefined();
  });
});

describe('fileUrl and commitUrl', () => {
  it('GitHub: blob/<commit>/<path>#L<line>, commit/<commit>', () => {
    const links = repositoryLinks(GITHUB)!;

    expect(fileUrl(links, COMMIT, 'contracts/acme/a.yaml', 12)).toBe(`https://github.com/acme/contracts/blob/${COMMIT}/contracts/acme/a.yaml#L12`);
    expect(commitUrl(links, COMMIT)).toBe(`https://github.com/acme/contracts/commit/${COMMIT}`);
  });

  it('GitLab: -/blob/ and -/commit/, under the directory of the files', () => {
    const links = repositoryLinks(GITLAB, 'infra')!;

    expect(fileUrl(links, COMMIT, 'contracts/a.yaml', 3)).toBe(
      `https://gitlab.example.com/platform/legal/contracts/-/blob/${COMMIT}/infra/contracts/a.yaml#L3`,
    );
    expect(commitUrl(links, COMMIT)).toBe(`https://gitlab.example.com/platform/legal/contracts/-/commit/${COMMIT}`);
  });

  it('encodes each path segment, parentheses included, so that the markdown link cannot end early', () => {
    const links = repositoryLinks(GITHUB)!;

    expect(fileUrl(links, COMMIT, 'contracts/a b (old)#1.yaml', 1)).toBe(
      `https://github.com/acme/contracts/blob/${COMMIT}/contracts/a%20b%20%28old%29%231.yaml#L1`,
    );
  });

  it.each([
    ['a short commit', 'abc1234', 'a.yaml', 1],
    ['a ref instead of a commit', 'main', 'a.yaml', 1],
    ['a path leaving the repository', COMMIT, '../secret.yaml', 1],
    ['an absolute path', COMMIT, '/etc/passwd', 1],
    ['line 0', COMMIT, 'a.yaml', 0],
  ])('no link for %s', (_name, commit, file, line) => {
    expect(fileUrl(repositoryLinks(GITHUB)!, commit, file, line)).toBeUndefined();
  });
});
