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
  // OAuth application mode: one token pair per portal with its refresh lease, and /oauth/start states.
  `CREATE TABLE portal_tokens (
     portal_id              TEXT    NOT NULL PRIMARY KEY,
     member_id              TEXT    NOT NULL,
     domain                 TEXT    NOT NULL,
     client_endpoint        TEXT,
     access_token           TEXT    NOT NULL,
     refresh_token          TEXT    NOT NULL,
     access_expires_at      INTEGER NOT NULL,
     obtained_at            INTEGER NOT NULL,
     application_token      TEXT,
     reauthorisation_reason TEXT,
     refresh_owner          TEXT,
     refresh_lock_until     INTEGER
   ) WITHOUT ROWID;
   CREATE TABLE oauth_states (
     state      TEXT    NOT NULL PRIMARY KEY,
     portal_id  TEXT    NOT NULL,
     expires_at INTEGER NOT NULL
   ) WITHOUT ROWID;`,
  // Several processes on one file: who delivers each portal (docs/decisions/replicas.md).
  `CREATE TABLE portal_leases (
     portal_id  TEXT    NOT NULL PRIMARY KEY,
     owner      TEXT    NOT NULL,
     epoch      INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   ) WITHOUT ROWID;`,
  // Retention: settled calls (finished or failed, nothing due) by their last change.
  `CREATE INDEX calls_settled ON calls (updated_at) WHERE due_at IS NULL AND state IN ('finished', 'failed');`,
  // Ringing first: a live call's register and card moves are listed before the history (docs/API.md).
  `ALTER TABLE calls ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
   CREATE INDEX calls_due_priority ON calls (portal_id, priority, due_at) WHERE due_at IS NOT NULL;`,
  // Missed-call tasks: the calls whose task a callback from their number completes (docs/API.md).
  `ALTER TABLE calls ADD COLUMN callback_phone TEXT;
   ALTER TABLE calls ADD COLUMN callback_until INTEGER;
   CREATE INDEX calls_awaiting_callback ON calls (portal_id, callback_phone, callback_until)
     WHERE callback_phone IS NOT NULL;`,
  // Recordings the bridge uploads itself (docs/API.md): downloaded or pushed content, until the portal has it.
  `CREATE TABLE recordings (
     portal_id  TEXT    NOT NULL,
     call_id    TEXT    NOT NULL,
     bytes      INTEGER NOT NULL,
     stored_at  INTEGER NOT NULL,
     content    BLOB    NOT NULL,
     PRIMARY KEY (portal_id, call_id)
   ) WITHOUT ROWID;`,
  // Click-to-call (docs/API.md): the portal's clicks, kept until a PBX call takes one (or a crmCallId its CALL_ID).
  `CREATE TABLE clicks (
     portal_id       TEXT    NOT NULL,
     portal_call_id  TEXT    NOT NULL,
     user_id         INTEGER,
     phone_number    TEXT,
     clicked_at      INTEGER,
     matched_call_id TEXT,
     created_at      INTEGER NOT NULL,
     PRIMARY KEY (portal_id, portal_call_id)
   ) WITHOUT ROWID;
   CREATE INDEX clicks_open ON clicks (portal_id, phone_number, clicked_at) WHERE matched_call_id IS NULL;
   CREATE INDEX clicks_created ON clicks (created_at);`,
  // Click-to-call (docs/API.md): dial requests the dialer works in the background.
  `CREATE TABLE dial_requests (
     portal_id       TEXT    NOT NULL,
     portal_call_id  TEXT    NOT NULL,
     kind            TEXT    NOT NULL,
     user_id         INTEGER,
     extension       TEXT,
     phone_number    TEXT    NOT NULL,
     crm_entity_type TEXT,
     crm_entity_id   INTEGER,
     line_number     TEXT,
     clicked_at      INTEGER NOT NULL,
     deadline        INTEGER NOT NULL,
     state           TEXT    NOT NULL,
     attempts        INTEGER NOT NULL DEFAULT 0,
     last_error      TEXT,
     due_at          INTEGER NOT NULL,
     updated_at      INTEGER NOT NULL,
     PRIMARY KEY (portal_id, portal_call_id)
   ) WITHOUT ROWID;
   CREATE INDEX dial_requests_due ON dial_requests (portal_id, state, due_at);`,
  // Portal events (docs/API.md): stored before the portal's post is answered, handled by the processor.
  `CREATE TABLE portal_events (
     id          INTEGER PRIMARY KEY AUTOINCREMENT,
     portal_id   TEXT    NOT NULL,
     dedupe_key  TEXT    NOT NULL,
     event       TEXT    NOT NULL,
     payload     TEXT    NOT NULL,
     received_at INTEGER NOT NULL,
     state       TEXT    NOT NULL,
     attempts    INTEGER NOT NULL,
     due_at      INTEGER,
     last_error  TEXT,
     settled_at  INTEGER,
     UNIQUE (portal_id, dedupe_key)
   );
   CREATE INDEX portal_events_due ON portal_events (portal_id, due_at) WHERE state = 'pending';`,
  // Many portals (docs/API.md): one row per installed portal, and each portal's PBX tokens (SHA-256 only).
  `CREATE TABLE portals (
     portal_id       TEXT    NOT NULL PRIMARY KEY,
     domain          TEXT    NOT NULL,
     client_endpoint TEXT    NOT NULL,
     status          TEXT    NOT NULL,
     installed_at    INTEGER NOT NULL,
     uninstalled_at  INTEGER,
     settings        TEXT    NOT NULL,
     updated_at      INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX portals_uninstalled ON portals (uninstalled_at) WHERE status = 'uninstalled';
   CREATE TABLE pbx_tokens (
     id         TEXT    NOT NULL PRIMARY KEY,
     portal_id  TEXT    NOT NULL,
     label      TEXT,
     digest     TEXT    NOT NULL UNIQUE,
     created_at INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX pbx_tokens_portal ON pbx_tokens (portal_id);`,
  // Dial requests fenced by their claim (docs/decisions/dialer-fencing.md); retention of dial requests and
  // portal events, oldest settled first.
  `ALTER TABLE dial_requests ADD COLUMN claim_owner TEXT;
   ALTER TABLE dial_requests ADD COLUMN claim_epoch INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX dial_requests_settled ON dial_requests (updated_at) WHERE state IN ('sent', 'failed');
   CREATE INDEX portal_events_settled ON portal_events (settled_at) WHERE state <> 'pending';`,
  // Recordings in chunks of 1 MiB (docs/decisions/recordings.md): no read or write handles a whole file.
  // A recording's row names its chunks by blob_id; rows from before keep their content inline.
  `CREATE TABLE recording_chunks (
     blob_id    TEXT    NOT NULL,
     seq        INTEGER NOT NULL,
     portal_id  TEXT    NOT NULL,
     created_at INTEGER NOT NULL,
     content    BLOB   NOT NULL,
     PRIMARY KEY (blob_id, seq)
   );
   CREATE INDEX recording_chunks_created ON recording_chunks (created_at);
   ALTER TABLE recordings ADD COLUMN blob_id TEXT;
   CREATE INDEX recordings_stored ON recordings (stored_at);`,
  // The ledger's durable position (ASTERISK_CDR_URL, docs/decisions/follow-ledger.md).
  `CREATE TABLE follow_positions (
     portal_id  TEXT    NOT NULL,
     source     TEXT    NOT NULL,
     position   TEXT    NOT NULL,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (portal_id, source)
   ) WITHOUT ROWID;`,
  // Portal signals (docs/decisions/portal-events.md): what every process on the file must hear at once
  // (an uninstall, a CRM change); the others read the new rows by their number.
  `CREATE TABLE portal_signals (
     seq        INTEGER PRIMARY KEY AUTOINCREMENT,
     origin     TEXT    NOT NULL,
     payload    TEXT    NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE INDEX portal_signals_created ON portal_signals (created_at);`,
  // Lines (docs/decisions/lines.md): the lines the bridge added to the portal's own list
  // (telephony.externalLine.add), once each; ignored calls (a line's "report": false) are settled too.
  `CREATE TABLE portal_lines (
     portal_id  TEXT    NOT NULL,
     number     TEXT    NOT NULL,
     name       TEXT    NOT NULL,
     added_at   INTEGER NOT NULL,
     PRIMARY KEY (portal_id, number)
   ) WITHOUT ROWID;
   DROP INDEX calls_settled;
   CREATE INDEX calls_settled ON calls (updated_at)
     WHERE due_at IS NULL AND state IN ('finished', 'failed', 'ignored');`,
];
