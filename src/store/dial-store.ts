import { fencedUpdate, Fence, NOW, SKIP_LOCKED, SqlDialect, sqlOf, SqlRunner, Statement } from './fence';

/**
 * Click-to-call dial requests (docs/API.md), stored durably when a click arrives and worked by the dialer in
 * the background. One row per portal CALL_ID: storing the same click again changes nothing.
 *
 * States: `pending` (to originate, at `dueAt` or later), `sending` (the originate was started: after a crash
 * it is taken as sent, so a click dials at most once), `sent` (the PBX took it), `failed` (never dialled;
 * the portal's call was finished as failed).
 */
export type DialState = 'pending' | 'sending' | 'sent' | 'failed';

export interface NewDialRequest {
  portalId: string;
  portalCallId: string;
  kind: 'click' | 'callback';
  userId?: number;
  phoneNumber: string;
  crmEntityType?: string;
  crmEntityId?: number;
  lineNumber?: string;
  /** ms epoch of the click. */
  clickedAt: number;
  /** ms epoch after which the PBX is no longer asked: clickedAt + DIAL_TIMEOUT_SEC. */
  deadline: number;
}

export interface DialRequest extends NewDialRequest {
  /** The employee's internal number, once resolved. */
  extension?: string;
  state: DialState;
  attempts: number;
  lastError?: string;
  /** pending: not before this (ms epoch, database clock); claimed or sending: until this the claim holds. */
  dueAt: number;
  updatedAt: number;
  /**
   * The claim this copy was taken with (`claim` sets it): every change the worker makes names it, so a
   * replica whose claim another has since taken changes nothing (docs/decisions/dialer-fencing.md).
   */
  claim?: Fence;
}

export type DialChange = Partial<
  Pick<DialRequest, 'state' | 'attempts' | 'lastError' | 'extension' | 'userId'>
> & {
  /** Due (pending) or held (claimed, sending) until this long after now on the database's clock. */
  dueInMs?: number;
};

/** A change made under a claim: only while the claim holds and the request is in one of `from`. */
export interface FencedDialChange {
  claim: Fence;
  from: readonly DialState[];
  change: DialChange;
}

export abstract class DialStore {
  /** Stores a new request (state pending, due at once); false when one with its CALL_ID is already there. */
  abstract add(request: NewDialRequest): Promise<boolean>;

  /**
   * Takes up to `limit` due pending requests for `leaseMs` (no other replica gets them meanwhile), each with
   * a new claim (`owner`, the next epoch), and first settles `sending` requests whose claim ran out (a crash
   * between start and end of an originate) as sent. Due and lease are on the database's clock.
   */
  abstract claim(portalId: string, owner: string, leaseMs: number, limit: number): Promise<DialRequest[]>;

  /**
   * Changes a request under its claim: true when it landed; false when another claim has taken the request
   * since, or it is no longer in one of `from` (then nothing changed, and the caller has lost it).
   */
  abstract update(portalId: string, portalCallId: string, fenced: FencedDialChange): Promise<boolean>;

  abstract find(portalId: string, portalCallId: string): Promise<DialRequest | undefined>;

  /** The earliest dueAt of a pending request, for the worker's sleep. */
  abstract nextDueAt(portalId: string): Promise<number | undefined>;

  /** Retention: deletes up to `limit` sent or failed requests last changed before `before` (ms epoch). */
  abstract deleteSettled(before: number, limit: number): Promise<number>;
}

/** The row both SQL stores read (snake_case columns, ms epochs as numbers). */
export interface DialRow {
  portal_id: string;
  portal_call_id: string;
  kind: string;
  user_id: number | null;
  extension: string | null;
  phone_number: string;
  crm_entity_type: string | null;
  crm_entity_id: number | null;
  line_number: string | null;
  clicked_at: number;
  deadline: number;
  state: string;
  attempts: number;
  last_error: string | null;
  due_at: number;
  updated_at: number;
  claim_owner: string | null;
  claim_epoch: number;
}

export function dialRequestOf(row: DialRow): DialRequest {
  return {
    portalId: row.portal_id,
    portalCallId: row.portal_call_id,
    kind: row.kind as DialRequest['kind'],
    userId: row.user_id ?? undefined,
    extension: row.extension ?? undefined,
    phoneNumber: row.phone_number,
    crmEntityType: row.crm_entity_type ?? undefined,
    crmEntityId: row.crm_entity_id ?? undefined,
    lineNumber: row.line_number ?? undefined,
    clickedAt: row.clicked_at,
    deadline: row.deadline,
    state: row.state as DialState,
    attempts: row.attempts,
    lastError: row.last_error ?? undefined,
    dueAt: row.due_at,
    updatedAt: row.updated_at,
    ...(row.claim_owner === null ? {} : { claim: { owner: row.claim_owner, epoch: row.claim_epoch } }),
  };
}

/** Column ← change field, for the SQL stores' UPDATE. */
const DIAL_CHANGE_COLUMNS: Record<Exclude<keyof DialChange, 'dueInMs'>, string> = {
  state: 'state',
  attempts: 'attempts',
  lastError: 'last_error',
  extension: 'extension',
  userId: 'user_id',
};

/** The settled states: never claimed again; retention deletes them. */
export const SETTLED_DIAL_STATES: readonly DialState[] = ['sent', 'failed'];

const TAKEN_AS_SENT = 'the bridge stopped during the originate: taken as sent';

/**
 * The dial store's statements, defined once for both SQL engines (`SqlDialect`: placeholders, the
 * database's clock, SKIP LOCKED). Each returns the statement to run; the engines only run them.
 */
export const dialStatements = {
  add(dialect: SqlDialect, request: NewDialRequest): Statement {
    return sqlOf(dialect)`INSERT INTO dial_requests (portal_id, portal_call_id, kind, user_id, phone_number,
         crm_entity_type, crm_entity_id, line_number, clicked_at, deadline, state, attempts, due_at, updated_at, claim_epoch)
       VALUES (${request.portalId}, ${request.portalCallId}, ${request.kind},
         ${request.userId}, ${request.phoneNumber}, ${request.crmEntityType},
         ${request.crmEntityId}, ${request.lineNumber}, ${request.clickedAt},
         ${request.deadline}, 'pending', 0, ${NOW}, ${NOW}, 0)
       ON CONFLICT (portal_id, portal_call_id) DO NOTHING
       RETURNING portal_call_id`;
  },

  /** A `sending` request whose claim ran out: the bridge died during the originate; taken as sent. */
  settleStale(dialect: SqlDialect, portalId: string): Statement {
    return sqlOf(dialect)`UPDATE dial_requests SET state = 'sent', updated_at = ${NOW},
         last_error = ${TAKEN_AS_SENT}
       WHERE portal_id = ${portalId} AND state = 'sending' AND due_at <= ${NOW}`;
  },

  claim(dialect: SqlDialect, portalId: string, owner: string, leaseMs: number, limit: number): Statement {
    // Placeholders in the order they appear (SQLite's are positional).
    return sqlOf(dialect)`UPDATE dial_requests SET due_at = ${NOW} + ${leaseMs}, updated_at = ${NOW},
         claim_owner = ${owner}, claim_epoch = claim_epoch + 1
       WHERE portal_id = ${portalId} AND portal_call_id IN (
         SELECT portal_call_id FROM dial_requests
         WHERE portal_id = ${portalId} AND state = 'pending' AND due_at <= ${NOW}
         ORDER BY due_at LIMIT ${limit}${SKIP_LOCKED})
       RETURNING *`;
  },

  update(dialect: SqlDialect, portalId: string, portalCallId: string, fenced: FencedDialChange): Statement {
    const { change } = fenced;
    const set: Record<string, unknown> = {};
    for (const [field, column] of Object.entries(DIAL_CHANGE_COLUMNS)) {
      if (field in change) set[column] = change[field as keyof typeof DIAL_CHANGE_COLUMNS];
    }
    const statement = fencedUpdate(
      dialect,
      {
        table: 'dial_requests',
        key: { portal_id: portalId, portal_call_id: portalCallId },
        ownerColumn: 'claim_owner',
        epochColumn: 'claim_epoch',
      },
      fenced.claim,
      {
        set,
        setSql: (q) => ({
          updated_at: q.now,
          ...(change.dueInMs === undefined ? {} : { due_at: `${q.now} + ${q.value(change.dueInMs)}` }),
        }),
        states: fenced.from,
      },
    );
    return { ...statement, text: `${statement.text} RETURNING portal_call_id` };
  },

  nextDueAt(dialect: SqlDialect, portalId: string): Statement {
    return sqlOf(dialect)`SELECT MIN(due_at) AS due FROM dial_requests
       WHERE portal_id = ${portalId} AND state IN ('pending', 'sending')`;
  },

  /** Retention, a batch at a time; rows another transaction holds are left for the next run. */
  deleteSettled(dialect: SqlDialect, before: number, limit: number): Statement {
    return sqlOf(dialect)`DELETE FROM dial_requests WHERE (portal_id, portal_call_id) IN (
         SELECT portal_id, portal_call_id FROM dial_requests
         WHERE state IN ('sent', 'failed') AND updated_at < ${before}
         ORDER BY updated_at LIMIT ${limit}${SKIP_LOCKED})
       RETURNING portal_call_id`;
  },
};

/**
 * Dial requests in either engine's database, with the statements above, timed by the database's clock: a
 * claim skips rows another replica is claiming (PostgreSQL `FOR UPDATE SKIP LOCKED`; SQLite's writes are
 * serial), moves their `due_at` past the lease and gives each a new claim epoch, and every later change
 * names that claim, so a request is worked by one replica at a time and one that lost its claim changes nothing.
 */
export class SqlDialStore extends DialStore {
  constructor(private readonly db: SqlRunner) {
    super();
  }

  async add(request: NewDialRequest): Promise<boolean> {
    return (await this.db.all(dialStatements.add(this.db.dialect, request))).length === 1;
  }

  async claim(portalId: string, owner: string, leaseMs: number, limit: number): Promise<DialRequest[]> {
    await this.db.all(dialStatements.settleStale(this.db.dialect, portalId));
    const rows = await this.db.all<DialRow>(
      dialStatements.claim(this.db.dialect, portalId, owner, leaseMs, limit),
    );
    return rows.map(dialRequestOf);
  }

  async update(portalId: string, portalCallId: string, fenced: FencedDialChange): Promise<boolean> {
    const statement = dialStatements.update(this.db.dialect, portalId, portalCallId, fenced);
    return (await this.db.all(statement)).length === 1;
  }

  async find(portalId: string, portalCallId: string): Promise<DialRequest | undefined> {
    const [row] = await this.db.all<DialRow>(
      sqlOf(this.db.dialect)`SELECT * FROM dial_requests
         WHERE portal_id = ${portalId} AND portal_call_id = ${portalCallId}`,
    );
    return row && dialRequestOf(row);
  }

  async nextDueAt(portalId: string): Promise<number | undefined> {
    const [row] = await this.db.all<{ due: number | null }>(
      dialStatements.nextDueAt(this.db.dialect, portalId),
    );
    return row?.due ?? undefined;
  }

  async deleteSettled(before: number, limit: number): Promise<number> {
    return (await this.db.all(dialStatements.deleteSettled(this.db.dialect, before, limit))).length;
  }
}
