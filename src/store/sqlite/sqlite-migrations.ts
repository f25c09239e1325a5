/** Schema history of the SQLite store; append only, each entry runs once in its own transaction. */
export const SQLITE_MIGRATIONS: string[] = [
  `CREATE TABLE call_events (
     portal_id   TEXT    NOT NULL,
     call_id     TEXT    NOT NULL,
     event       TEXT    NOT NULL,
     payload     TEXT    NOT NULL,
     received_at INTEGER NOT NULL,
     PRIMARY KEY (portal_id, call_id, event)
   ) WITHOUT ROWID;
   CREATE TABLE calls (
     portal_id  TEXT    NOT NULL,
     call_id    TEXT    NOT NULL,
     state      TEXT    NOT NULL,
     next_step  TEXT,
     due_at     INTEGER,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     data       TEXT    NOT NULL,
     PRIMARY KEY (portal_id, call_id)
   ) WITHOUT ROWID;
   CREATE INDEX calls_due ON calls (portal_id, due_at) WHERE due_at IS NOT NULL;
   CREATE INDEX calls_state ON calls (portal_id, state, updated_at);
   CREATE TABLE probe (id INTEGER PRIMARY KEY, at INTEGER NOT NULL);`,
];
