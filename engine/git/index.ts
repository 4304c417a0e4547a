export { readBlobs } from './cat-file.ts';
export { changedFiles, type ChangedFile, type ChangeStatus } from './changed-files.ts';
export { GitError, redactUrls, type GitErrorCode } from './errors.ts';
export { fetchCommand, missingRefMessage, noMergeBaseMessage } from './fetch-hint.ts';
export { listTree, type TreeEntry } from './list-tree.ts';
export { closeGitRepository, openGitRepository, runGit, type GitRepository, type OpenGitOptions } from './repository.ts';
export { checkRefSyntax, isObjectId, isShallow, mergeBase, remoteNames, resolveCommit } from './resolve-ref.ts';
export { checkAncestor, type AncestorCheck } from './is-ancestor.ts';
