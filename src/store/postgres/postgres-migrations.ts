/**
 * Schema history of the PostgreSQL store; append only, each entry runs once, in its own transaction,
 * under an advisory lock so replicas starting together take turns. Times are ms epochs (bigint), JSON
 * documents are text, as in the SQLite schema, so both stores share their row mapping.
 */
export const POSTGRES_MIGRATIONS: string[] = [
  `CREATE TABLE call_events (
     portal_id   text   NOT NULL,
     call_id     text   NOT NULL,
     event       text   NOT NULL,
     payload     text   NOT NULL,
     received_at bigint NOT NULL,
     PRIMARY KEY (portal_id, call_id, event)
   );
   CREATE TABLE calls (
     portal_id  text   NOT NULL,
     call_id    text   NOT NULL,
     state      text   NOT NULL,
     next_step  text,
     due_at     bigint,
     created_at bigint NOT NULL,
     updated_at bigint NOT NULL,
     data       text   NOT NULL,
     PRIMARY KEY (portal_id, call_id)
   );
   CREATE INDEX calls_due ON calls (portal_id, due_at) WHERE due_at IS NOT NULL;
   CREATE INDEX calls_state ON calls (portal_id, state, updated_at);
   CREATE TABLE probe (id integer PRIMARY KEY, at bigint NOT NULL);
   CREATE TABLE portal_tokens (
     portal_id              text   NOT NULL PRIMARY KEY,
     member_id              text   NOT NULL,
     domain                 text   NOT NULL,
     client_endpoint        text,
     access_token           text   NOT NULL,
     refresh_token          text   NOT NULL,
     access_expires_at      bigint NOT NULL,
     obtained_at            bigint NOT NULL,
     application_token      text,
     reauthorisation_reason text,
     refresh_owner          text,
     refresh_lock_until     bigint
   );
   CREATE TABLE oauth_states (
     state      text   NOT NULL PRIMARY KEY,
     portal_id  text   NOT NULL,
     expires_at bigint NOT NULL
   );
   CREATE TABLE portal_leases (
     portal_id  text   NOT NULL PRIMARY KEY,
     owner      text   NOT NULL,
     epoch      bigint NOT NULL,
     expires_at bigint NOT NULL
   );
   CREATE TABLE portal_budget (
     portal_id   text             NOT NULL PRIMARY KEY,
     level       double precision NOT NULL,
     updated_at  double precision NOT NULL,
     rate_factor double precision NOT NULL
   );`,
  // Retention: settled calls (finished or failed, nothing due) by their last change.
  `CREATE INDEX calls_settled ON calls (updated_at) WHERE due_at IS NULL AND state IN ('finished', 'failed');`,
  // Ringing first: a live call's register and card moves are listed before the history (docs/API.md).
  `ALTER TABLE calls ADD COLUMN priority smallint NOT NULL DEFAULT 1;
   CREATE INDEX calls_due_priority ON calls (portal_id, priority, due_at) WHERE due_at IS NOT NULL;`,
  // Missed-call tasks: the calls whose task a callback from their number completes (docs/API.md).
  `ALTER TABLE calls ADD COLUMN callback_phone text;
   ALTER TABLE calls ADD COLUMN callback_until bigint;
   CREATE INDEX calls_awaiting_callback ON calls (portal_id, callback_phone, callback_until)
     WHERE callback_phone IS NOT NULL;`,
  // Recordings the bridge uploads itself (docs/API.md): downloaded or pushed content, until the portal has it.
  `CREATE TABLE recordings (
     portal_id  text   NOT NULL,
     call_id    text   NOT NULL,
     bytes      bigint NOT NULL,
     stored_at  bigint NOT NULL,
     content    bytea  NOT NULL,
     PRIMARY KEY (portal_id, call_id)
   );`,
  // Click-to-call (docs/API.md): the portal's clicks, kept until a PBX call takes one (or a crmCallId its CALL_ID).
  `CREATE TABLE clicks (
     portal_id       text   NOT NULL,
     portal_call_id  text   NOT NULL,
     user_id         bigint,
     phone_number    text,
     clicked_at      bigint,
     matched_call_id text,
     created_at      bigint NOT NULL,
     PRIMARY KEY (portal_id, portal_call_id)
   );
   CREATE INDEX clicks_open ON clicks (portal_id, phone_number, clicked_at) WHERE matched_call_id IS NULL;
   CREATE INDEX clicks_created ON clicks (created_at);`,
  // Click-to-call (docs/API.md): dial requests the dialer works in the background.
  `CREATE TABLE dial_requests (
     portal_id       text    NOT NULL,
     portal_call_id  text    NOT NULL,
     kind            text    NOT NULL,
     user_id         bigint,
     extension       text,
     phone_number    text    NOT NULL,
     crm_entity_type text,
     crm_entity_id   bigint,
     line_number     text,
     clicked_at      bigint  NOT NULL,
     deadline        bigint  NOT NULL,
     state           text    NOT NULL,
     attempts        bigint  NOT NULL DEFAULT 0,
     last_error      text,
     due_at          bigint  NOT NULL,
     updated_at      bigint  NOT NULL,
     PRIMARY KEY (portal_id, portal_call_id)
   );
   CREATE INDEX dial_requests_due ON dial_requests (portal_id, state, due_at);`,
  // Portal events (docs/API.md): stored before the portal's post is answered, handled by the processor.
  `CREATE TABLE portal_events (
     id          bigserial PRIMARY KEY,
     portal_id   text   NOT NULL,
     dedupe_key  text   NOT NULL,
     event       text   NOT NULL,
     payload     text   NOT NULL,
     received_at bigint NOT NULL,
     state       text   NOT NULL,
     attempts    integer NOT NULL,
     due_at      bigint,
     last_error  text,
     settled_at  bigint,
     UNIQUE (portal_id, dedupe_key)
   );
   CREATE INDEX portal_events_due ON portal_events (portal_id, due_at) WHERE state = 'pending';`,
  // Sharding (docs/decisions/sharding.md): each replica's liveness is a session advisory lock on
  // (REPLICA_LOCK_CLASS, lock_key) held by its dedicated connection; this table says whose lock is whose.
  `CREATE TABLE bridge_replicas (
     replica_id text    PRIMARY KEY,
     lock_key   integer NOT NULL UNIQUE,
     joined_at  bigint  NOT NULL
   );`,
  // Many portals (docs/API.md): one row per installed portal, and each portal's PBX tokens (SHA-256 only).
  `CREATE TABLE portals (
     portal_id       text   NOT NULL PRIMARY KEY,
     domain          text   NOT NULL,
     client_endpoint text   NOT NULL,
     status          text   NOT NULL,
     installed_at    bigint NOT NULL,
     uninstalled_at  bigint,
     settings        text   NOT NULL,
     updated_at      bigint NOT NULL
   );
   CREATE INDEX portals_uninstalled ON portals (uninstalled_at) WHERE status = 'uninstalled';
   CREATE TABLE pbx_tokens (
     id         text   NOT NULL PRIMARY KEY,
     portal_id  text   NOT NULL,
     label      text,
     digest     text   NOT NULL UNIQUE,
     created_at bigint NOT NULL
   );
   CREATE INDEX pbx_tokens_portal ON pbx_tokens (portal_id);`,
  // Dial requests fenced by their claim (docs/decisions/dialer-fencing.md); retention of dial requests and
  // portal events, oldest settled first.
  `ALTER TABLE dial_requests ADD COLUMN claim_owner text;
   ALTER TABLE dial_requests ADD COLUMN claim_epoch bigint NOT NULL DEFAULT 0;
   CREATE INDEX dial_requests_settled ON dial_requests (updated_at) WHERE state IN ('sent', 'failed');
   CREATE INDEX portal_events_settled ON portal_events (settled_at) WHERE state <> 'pending';`,
  // Recordings in chunks of 1 MiB (docs/decisions/recordings.md): no read or write handles a whole file.
  // A recording's row names its chunks by blob_id; rows from before keep their content inline.
  `CREATE TABLE recording_chunks (
     blob_id    text    NOT NULL,
     seq        integer NOT NULL,
     portal_id  text    NOT NULL,
     created_at bigint NOT NULL,
     content    bytea   NOT NULL,
     PRIMARY KEY (blob_id, seq)
   );
   -- Audio does not compress: stored out of line as it is, without a compression attempt per chunk.
   ALTER TABLE recording_chunks ALTER COLUMN content SET STORAGE EXTERNAL;
   CREATE INDEX recording_chunks_created ON recording_chunks (created_at);
   ALTER TABLE recordings ADD COLUMN blob_id text;
   CREATE INDEX recordings_stored ON recordings (stored_at);`,
  // The ledger's durable position (ASTERISK_CDR_URL, docs/decisions/follow-ledger.md).
  `CREATE TABLE follow_positions (
     portal_id  text   NOT NULL,
     source     text   NOT NULL,
     position   text   NOT NULL,
     updated_at bigint NOT NULL,
     PRIMARY KEY (portal_id, source)
   );`,
  // Lines (docs/decisions/lines.md): the lines the bridge added to the portal's own list
  // (telephony.externalLine.add), once each; ignored calls (a line's "report": false) are settled too.
  `CREATE TABLE portal_lines (
     portal_id  text    NOT NULL,
     number     text    NOT NULL,
     name       text    NOT NULL,
     added_at   bigint NOT NULL,
     PRIMARY KEY (portal_id, number)
   );
   DROP INDEX calls_settled;
   CREATE INDEX calls_settled ON calls (updated_at)
     WHERE due_at IS NULL AND state IN ('finished', 'failed', 'ignored');`,
];
