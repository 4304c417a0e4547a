/**
 * The file store's per-tenant journal (journal-format.ts, tenant-journal.ts): torn appends and
 * interrupted compactions at every byte, stores written by the per-contract layout before it, and
 * writers without the lock appending while the holder compacts.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileDurably } from '../../engine/state/atomic-write.ts';
import { fileStateStore, serialiseStateRecord, stateFileName, stateRecordOf, type AppliedContract, type StoredContract } from '../../engine/state/index.ts';
import { journalRecordLine, replayJournal } from '../../engine/state/journal-format.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'contract-sync-journal-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const JOURNAL = '.records.jsonl';

function applied(contractId: string, name: string): AppliedContract {
  return {
    contractId,
    fields: { Name: name, Description: `é ${name}`, Company: [{ Id: 1, RelationType: 'Client' }] },
    fingerprint: `sha256:${name}`,
    appliedAt: '2027-01-01T00:00:00.000Z',
    commit: null,
  };
}

async function journalBytes(tenant = 'acme'): Promise<Buffer> {
  return readFile(path.join(dir, tenant, JOURNAL));
}

async function putJournal(content: Buffer | string, tenant = 'acme'): Promise<void> {
  await mkdir(path.join(dir, tenant), { recursive: true });
  await writeFile(path.join(dir, tenant, JOURNAL), content);
}

/** What the layout before the journal wrote for one contract: the old writeContract's very file. */
async function writeOldRecord(tenant: string, record: AppliedContract): Promise<void> {
  await mkdir(path.join(dir, tenant), { recursive: true });
  await writeFileDurably(
    path.join(dir, tenant),
    stateFileName(record.contractId),
    serialiseStateRecord(stateRecordOf(tenant, record)),
    `${record.contractId}-old`,
  );
}

function names(records: readonly StoredContract[]): string[] {
  return records.map((record) => `${record.contractId}=${String(record.fields.Name)}`);
}

describe('journal: a torn append', () => {
  it('loses no acknowledged record when the last batch is cut at any byte, and the next append is read whole', async () => {
    const store = fileStateStore(dir);
    await store.writeContract('acme', applied('A', 'a1'));
    await store.writeContract('acme', applied('B', 'b1'));
    await store.removeRecord('acme', 'B');
    const acknowledged = await journalBytes();
    await store.writeContract('acme', applied('A', 'a2'));
    const full = await journalBytes();

    for (let cut = acknowledged.length; cut < full.length; cut++) {
      await putJournal(full.subarray(0, cut));
      const torn = fileStateStore(dir);
      const before = names(await torn.listRecords('acme'));
      await torn.writeContract('acme', applied('C', `c${cut}`));
      const after = names(await fileStateStore(dir).listRecords('acme'));

      // Cut only before its newline, the last line is whole (its checksum says so): it counts, before and after.
      const a = cut === full.length - 1 ? 'A=a2' : 'A=a1';
      expect(before, `cut at ${cut}`).toEqual([a]);
      expect(after, `cut at ${cut}`).toEqual([a, `C=c${cut}`]);
    }
    await putJournal(full);
    expect(names(await fileStateStore(dir).listRecords('acme'))).toEqual(['A=a2']);
  });

  it('skips a line whose checksum does not match, and refuses a whole line it cannot read', async () => {
    const good = journalRecordLine(stateRecordOf('acme', applied('A', 'a')));
    const flipped = good.replace('"Name":"a"', '"Name":"b"');

    await putJournal(`${flipped}\n${good}`);
    const read = await fileStateStore(dir).readTenant('acme');
    const replay = replayJournal(Buffer.from(`${flipped}${good}`), 'f', 'acme');
    await putJournal(`00000000 {"v":1,"id":"A","fields":{}}\n${good}`);
    const zeroCrc = await fileStateStore(dir).readTenant('acme');

    expect(read.get('A')?.fields.Name).toBe('a');
    expect(replay.torn).toBe(1);
    expect(zeroCrc.get('A')?.fields.Name).toBe('a');
    // A checksum that matches: written whole by a writer, so not a crash's doing.
    const json = '{"v":2,"id":"B","fields":{}}';
    await putJournal(`${crc32(json).toString(16).padStart(8, '0')} ${json}\n`);
    await expect(fileStateStore(dir).readTenant('acme')).rejects.toThrow(/\.records\.jsonl:1: state version 2 is not supported/);
  });
});

describe('journal: reading the entries of some ids', () => {
  function line(json: string): string {
    return `${crc32(json).toString(16).padStart(8, '0')} ${json}\n`;
  }

  it('tells an id from the start of its line, and parses a line whose id holds an escape to tell it', () => {
    const a = journalRecordLine(stateRecordOf('acme', applied('A', 'a')));
    const quoted = journalRecordLine(stateRecordOf('acme', applied('say "hi"', 'q')));
    const other = journalRecordLine(stateRecordOf('acme', applied('B', 'b')));

    const replay = replayJournal(Buffer.from(`${a}${quoted}${other}`), 'f', 'acme', new Set(['say "hi"', 'A']));

    expect([...replay.entries.keys()]).toEqual(['A', 'say "hi"']);
    expect(replay.entries.get('say "hi"')?.fields.Name).toBe('q');
  });

  it('refuses a whole line it cannot read even when its id is not asked for, where only parsing it tells the id', () => {
    const a = journalRecordLine(stateRecordOf('acme', applied('A', 'a')));
    const bad = line('{"v":1,"id":"x\\"y","fields":1}');

    expect(() => replayJournal(Buffer.from(`${a}${bad}`), 'f', 'acme', new Set(['A']))).toThrow(/^f:2: "fields" must be an object$/);
  });
});

describe('journal: compaction', () => {
  it('rewrites the journal when the holder lets go: one line per live record, the same records read', async () => {
    const store = fileStateStore(dir, { compactRatio: 1 });
    const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    for (let round = 0; round < 3; round++) await Promise.all(['A', 'B', 'C', 'D'].map((id) => store.writeContract('acme', applied(id, `${id}${round}`))));
    await store.removeRecord('acme', 'C');
    const before = await store.listRecords('acme');
    const grown = (await journalBytes()).length;

    await lock.release();

    const compacted = await journalBytes();
    expect(compacted.length).toBeLessThan(grown);
    expect(
      compacted
        .toString('utf8')
        .split('\n')
        .filter((line) => line !== ''),
    ).toHaveLength(3);
    expect(await fileStateStore(dir).listRecords('acme')).toStrictEqual(before);
    expect(await readdir(path.join(dir, 'acme'))).toEqual([JOURNAL]);
  });

  it('leaves a journal alone while it is within compactRatio times its live size', async () => {
    const store = fileStateStore(dir);
    await store.writeContract('acme', applied('A', 'a'));
    await store.writeContract('acme', applied('B', 'b'));
    const written = await journalBytes();

    await (await store.lock('acme', { timeoutMs: 0, owner: 'run-1' })).release();

    expect(await journalBytes()).toEqual(written);
  });

  it('reads the old journal or the new one, whole, when a compaction is cut at any byte of its temporary file', async () => {
    const store = fileStateStore(dir, { compactRatio: 1 });
    for (const name of ['a1', 'a2', 'a3']) await store.writeContract('acme', applied('A', name));
    await store.writeContract('acme', applied('B', 'b'));
    const old = await journalBytes();
    const expected = await store.listRecords('acme');
    await (await store.lock('acme', { timeoutMs: 0, owner: 'run-1' })).release();
    const compacted = await journalBytes();

    for (let cut = 0; cut <= compacted.length; cut++) {
      // Killed before the rename: the old journal and a temporary file cut anywhere.
      await putJournal(old);
      await writeFile(path.join(dir, 'acme', `${JOURNAL}.crash${cut}.tmp`), compacted.subarray(0, cut));
      expect(await fileStateStore(dir).listRecords('acme'), `cut at ${cut}`).toStrictEqual(expected);
      await rm(path.join(dir, 'acme', `${JOURNAL}.crash${cut}.tmp`));
    }
    // The next holder removes the temporary file a compaction left.
    await writeFile(path.join(dir, 'acme', `.${JOURNAL}.crash.tmp`), compacted.subarray(0, 10));
    await (await fileStateStore(dir).lock('acme', { timeoutMs: 0, owner: 'run-2' })).release();
    expect(await readdir(path.join(dir, 'acme'))).toEqual([JOURNAL]);
  });

  it('keeps every write of stores without the lock that append while the holder compacts again and again', { timeout: 30_000 }, async () => {
    const holder = fileStateStore(dir, { compactRatio: 1 });
    const others = [fileStateStore(dir), fileStateStore(dir)];
    let compactions = 0;
    let writing = true;

    const compacting = (async () => {
      for (let round = 0; writing; round++) {
        const lock = await holder.lock('acme', { timeoutMs: 5000, owner: 'holder' });
        await holder.writeContract('acme', applied('H', `h${round}`));
        await lock.release();
        compactions += 1;
      }
    })();
    const last = new Map<string, string>();
    await Promise.all(
      others.map(async (store, index) => {
        for (let n = 0; n < 150; n++) {
          const id = `W${index}-${n % 10}`;
          await store.writeContract('acme', applied(id, `${id}:${n}`));
          last.set(id, `${id}:${n}`);
        }
      }),
    );
    writing = false;
    await compacting;

    const known = await fileStateStore(dir).readTenant('acme');
    expect(compactions).toBeGreaterThan(2);
    for (const [id, name] of last) expect(known.get(id)?.fields.Name, id).toBe(name);
  });
});

describe('journal: a store written by the per-contract layout before it', () => {
  it('reads the old files as they are, then migrates them into the journal at the first compaction', async () => {
    await writeOldRecord('acme', applied('A', 'a-old'));
    await writeOldRecord('acme', applied('B', 'b-old'));
    await writeOldRecord('acme', applied('C', 'c-old'));
    await writeOldRecord('globex', applied('G', 'g-old'));
    await writeFile(path.join(dir, 'acme', '.A.json.0123.tmp'), '{"version":1,');
    const store = fileStateStore(dir);

    const asWritten = names(await store.listRecords('acme'));
    const tenants = await store.listTenants();
    const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    await store.writeContract('acme', applied('A', 'a-new'));
    const removed = await store.removeRecord('acme', 'B');
    const beforeMigration = names(await store.listRecords('acme'));
    await lock.release();

    expect(asWritten).toEqual(['A=a-old', 'B=b-old', 'C=c-old']);
    expect(tenants).toEqual(['acme', 'globex']);
    expect(removed).toBe(true);
    expect(beforeMigration).toEqual(['A=a-new', 'C=c-old']);
    expect(await readdir(path.join(dir, 'acme'))).toEqual([JOURNAL]);
    expect(names(await fileStateStore(dir).listRecords('acme'))).toEqual(['A=a-new', 'C=c-old']);
    expect((await fileStateStore(dir).readRecord('acme', 'C'))?.appliedAt).toBe('2027-01-01T00:00:00.000Z');
    expect(await readdir(path.join(dir, 'globex'))).toEqual(['G.json']);
    expect(names(await fileStateStore(dir).listRecords('globex'))).toEqual(['G=g-old']);
  });

  it('keeps a removed record removed when a migration is cut after its rename, before the old files went', async () => {
    await writeOldRecord('acme', applied('A', 'a-old'));
    await writeOldRecord('acme', applied('B', 'b-old'));
    const store = fileStateStore(dir);
    const lock = await store.lock('acme', { timeoutMs: 0, owner: 'run-1' });
    await store.removeRecord('acme', 'B');
    await lock.release();
    const migrated = await journalBytes();

    // As if killed before deleting the old files: they are back beside the new journal.
    await writeOldRecord('acme', applied('A', 'a-old'));
    await writeOldRecord('acme', applied('B', 'b-old'));

    expect(migrated.toString('utf8')).toMatch(/"id":"B","removed":true/);
    expect(names(await fileStateStore(dir).listRecords('acme'))).toEqual(['A=a-old']);
    await (await fileStateStore(dir).lock('acme', { timeoutMs: 0, owner: 'run-2' })).release();
    expect(await readdir(path.join(dir, 'acme'))).toEqual([JOURNAL]);
    expect(names(await fileStateStore(dir).listRecords('acme'))).toEqual(['A=a-old']);
  });
});
