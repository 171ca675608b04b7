// `tokenmill usage` and `tokenmill trajectories export`: read-only views of a data directory's database.
import { openDatabase } from './database.js';
import { exportTrajectoryGroups } from './trajectories.js';
import { readUsage, type UsageRow } from './usage.js';

function takeFlags(args: readonly string[], valued: readonly string[], bare: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    let a = args[i]!;
    let v: string | undefined;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) {
      v = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    if (bare.includes(a) && v === undefined) out.set(a, '');
    else if (valued.includes(a)) {
      v ??= args[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      out.set(a, v);
    } else throw new Error(`unknown option '${a}'`);
  }
  return out;
}

export const usageHelp = 'usage: tokenmill usage [--data-dir D] [--since YYYY-MM-DD] [--json]\n';
export const trajectoriesHelp = 'usage: tokenmill trajectories export --model ID [--split S] [--data-dir D]\n';

export function usageCommand(args: string[]): number {
  let flags: Map<string, string>;
  try {
    flags = takeFlags(args, ['--data-dir', '--since'], ['--json']);
  } catch (e) {
    process.stderr.write(`tokenmill usage: ${(e as Error).message}\n${usageHelp}`);
    return 1;
  }
  const since = flags.get('--since');
  if (since !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(since)) {
    process.stderr.write(`tokenmill usage: --since: expected YYYY-MM-DD but got '${since}'\n`);
    return 1;
  }
  const db = openDatabase(flags.get('--data-dir') ?? './tokenmill-data', { readonly: true });
  let rows: UsageRow[];
  try {
    rows = readUsage(db, since);
  } finally {
    db.close();
  }
  if (flags.has('--json')) {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return 0;
  }
  const header = ['day', 'team', 'project', 'model', 'requests', 'prompt_tokens', 'cached_tokens', 'completion_tokens'] as const;
  const table = [header.map(String), ...rows.map((r) => header.map((k) => String(r[k])))];
  const widths = header.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const numeric = (i: number): boolean => i >= 4;
  for (const row of table) process.stdout.write(`${row.map((c, i) => (numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd()}\n`);
  if (rows.length === 0) process.stdout.write('(no usage recorded)\n');
  return 0;
}

export function trajectoriesCommand(args: string[]): number {
  const [sub, ...rest] = args;
  if (sub !== 'export') {
    process.stderr.write(`tokenmill trajectories: expected the 'export' subcommand\n${trajectoriesHelp}`);
    return 1;
  }
  let flags: Map<string, string>;
  try {
    flags = takeFlags(rest, ['--model', '--split', '--data-dir'], []);
  } catch (e) {
    process.stderr.write(`tokenmill trajectories export: ${(e as Error).message}\n${trajectoriesHelp}`);
    return 1;
  }
  const model = flags.get('--model');
  if (!model) {
    process.stderr.write(`tokenmill trajectories export: --model is required\n${trajectoriesHelp}`);
    return 1;
  }
  const db = openDatabase(flags.get('--data-dir') ?? './tokenmill-data', { readonly: true });
  try {
    for (const group of exportTrajectoryGroups(db, model, flags.get('--split'))) process.stdout.write(`${JSON.stringify(group)}\n`);
  } finally {
    db.close();
  }
  return 0;
}
