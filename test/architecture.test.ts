/**
 * The layers of engine/ (docs/architecture.md section 4), checked on the sources: folders import
 * one way, no file imports itself through others, and the command layer reaches the engine only
 * through the runs, renderers and public types.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ENGINE = path.resolve(import.meta.dirname, '../engine');

/**
 * Lowest first: a folder may import only folders before it. The top level holds only index.ts, the
 * library's public surface, which re-exports from every folder.
 * `io` (the clock, timers, bounded reads, network errors), `text` (escaping, plurals, suggestions)
 * and `diagnostic` import nothing of the engine above them; `yaml` (the readers with source
 * positions) sits on `model`; `package` (the package's own files and generated specs) on `plan`.
 * `notify` (message builders, the signature, drift dedupe, delivery) sits on `drift` (attributions)
 * and below `pipeline`, whose runs' outcomes it is sent from. `telemetry` (OpenTelemetry: where to
 * export, what a run's report says as spans and metrics, the SDK adapter) sits on `apply` and `drift`.
 * `policy` (the CEL rules: compiled from the config's rules, evaluated on contracts) sits on `config`
 * and `model`, below `plan`, whose runs evaluate it.
 * `output` (spools, streams written at the reader's pace, the progress line, output files) sits
 * above `run`: a run returns values and never writes a command's output, so it cannot import the
 * adapters that do.
 */
const LAYERS = [
  'io',
  'text',
  'diagnostic',
  'log',
  'model',
  'yaml',
  'config',
  'desired',
  'policy',
  'plan',
  'package',
  'state',
  'git',
  'auth',
  'api',
  'apply',
  'drift',
  'notify',
  'telemetry',
  'init',
  'pipeline',
  'run',
  'output',
  'cli',
];

interface Import {
  readonly from: string;
  readonly to: string;
  readonly typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith('.ts') ? [file] : [];
  });
}

/** Every relative import of engine/ (static, type-only and dynamic), as paths relative to engine/. */
function engineImports(): Import[] {
  return sourceFiles(ENGINE).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const typeOnly = new Set([...text.matchAll(/^import type [^;]*? from '([^']+)'/gms)].map((match) => match[1]));
    return ts
      .preProcessFile(text, true, true)
      .importedFiles.map((imported) => imported.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => ({ from: path.relative(ENGINE, file), to: path.relative(ENGINE, path.resolve(path.dirname(file), name)), typeOnly: typeOnly.has(name) }));
  });
}

function folderOf(file: string): string {
  return file.includes(path.sep) ? file.split(path.sep)[0]! : '';
}

const imports = engineImports();

describe('engine layers', () => {
  it('hold every file in a folder of a layer: the top level has only the public surface', () => {
    const loose = readdirSync(ENGINE, { withFileTypes: true }).filter((entry) => entry.isFile() && entry.name !== 'index.ts');
    const unplaced = readdirSync(ENGINE, { withFileTypes: true }).filter((entry) => entry.isDirectory() && !LAYERS.includes(entry.name));

    expect(loose.map((entry) => entry.name)).toEqual([]);
    expect(unplaced.map((entry) => entry.name)).toEqual([]);
  });

  it('import one way: each folder only folders below it', () => {
    const upward = imports.filter(({ from, to }) => {
      const [source, target] = [folderOf(from), folderOf(to)];
      // index.ts, the only file at the top, re-exports every folder.
      if (from === 'index.ts' || source === target || to.startsWith('..')) return false;
      return LAYERS.indexOf(target) > LAYERS.indexOf(source);
    });

    expect(upward.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('have no import circle, type-only imports included', () => {
    const graph = new Map<string, string[]>();
    for (const { from, to } of imports) graph.set(from, [...(graph.get(from) ?? []), to]);
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    function visit(file: string, trail: string[]): void {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...trail.slice(trail.indexOf(file)), file].join(' > '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, 'done');
    }
    for (const file of graph.keys()) visit(file, []);

    expect(circles).toEqual([]);
  });

  it('keep the command layer thin: engine/cli reaches state, git, apply and plan only through renderers and types', () => {
    // Besides renderers: the state command's argument checks.
    const allowed = new Set(['state/store-input.ts']);
    const reaching = imports.filter(({ from, to, typeOnly }) => {
      if (folderOf(from) !== 'cli' || typeOnly || !['state', 'git', 'apply', 'plan'].includes(folderOf(to))) return false;
      return !path.basename(to).startsWith('render-') && !allowed.has(to.split(path.sep).join('/'));
    });

    expect(reaching.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });
});
