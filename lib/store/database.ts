// NOTE(store/database): one SQLite file per data directory, opened with WAL and synchronous=FULL so a
// committed transaction survives kill -9 and power loss. The schema is versioned in code: `user_version`
// says how many entries of MIGRATIONS have run; each new version appends one entry, never edits one.
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

export type Database = BetterSqlite3.Database;

export const DB_FILE = 'tokenmill.db';

const MIGRATIONS: readonly string[] = [
  // 1: usage per (day, team, project, model); trajectory logs, groups and trajectories.
  `CREATE TABLE usage (
     day TEXT NOT NULL, team TEXT NOT NULL, project TEXT NOT NULL, model TEXT NOT NULL,
     requests INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
     cached_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (day, team, project, model)) WITHOUT ROWID;
   CREATE TABLE trajectory_log (
     id INTEGER PRIMARY KEY, model TEXT NOT NULL, split TEXT NOT NULL, logged_at TEXT NOT NULL,
     groups INTEGER NOT NULL, trajectories INTEGER NOT NULL);
   CREATE TABLE trajectory_group (
     id INTEGER PRIMARY KEY, log_id INTEGER NOT NULL REFERENCES trajectory_log(id), idx INTEGER NOT NULL,
     body TEXT NOT NULL);
   CREATE TABLE trajectory (
     id INTEGER PRIMARY KEY, group_id INTEGER NOT NULL REFERENCES trajectory_group(id), idx INTEGER NOT NULL,
     reward REAL NOT NULL, body TEXT NOT NULL);
   CREATE INDEX trajectory_log_model_split ON trajectory_log (model, split, id);
   CREATE INDEX trajectory_group_log ON trajectory_group (log_id, idx);
   CREATE INDEX trajectory_group_id ON trajectory (group_id, idx);`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * How long the server's connections wait for another process's lock before the write fails (a 503
 * for a trajectory log, a retried usage flush): the event loop's connection must not wait long.
 */
export const SERVER_BUSY_TIMEOUT_MS = 250;

/** Opens (creating when missing) the database in `dataDir` and brings its schema up to date. */
export function openDatabase(dataDir: string, options: { readonly?: boolean } = {}): Database {
  if (!options.readonly) fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, DB_FILE);
  if (options.readonly && !fs.existsSync(file)) throw new Error(`no tokenmill database in ${dataDir} (expected ${file})`);
  const db = new BetterSqlite3(file, { readonly: options.readonly ?? false });
  db.pragma('busy_timeout = 5000');
  if (!options.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
  }
  return db;
}

function migrate(db: Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this tokenmill understands (${MIGRATIONS.length})`);
  }
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
