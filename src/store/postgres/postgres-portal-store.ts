import { PortalStatus } from '../portal-store';
import { FoundPbxToken, PbxTokenRow, SqlPortalStore, tokenOf } from '../sql-portal-store';
import { PostgresDatabase } from './postgres-database';
import { StatementGroup } from './statement-group';

/** Portal records and PBX tokens in PostgreSQL, shared by every replica (its budget rows purged with them). */
export class PostgresPortalStore extends SqlPortalStore {
  private readonly tokenLooks = new StatementGroup<string, FoundPbxToken | undefined>((digests) =>
    this.findPbxTokens(digests),
  );

  constructor(private readonly database: PostgresDatabase) {
    super(database, ['portal_budget']);
  }

  /** Every PBX request's token look-up made while one is at the database goes in the next (`StatementGroup`). */
  override findPbxToken(digest: string): Promise<FoundPbxToken | undefined> {
    return this.tokenLooks.run(digest);
  }

  private async findPbxTokens(digests: readonly string[]): Promise<(FoundPbxToken | undefined)[]> {
    const rows = await this.database.query<PbxTokenRow & { status: string }>(
      'SELECT t.*, p.status FROM pbx_tokens t JOIN portals p ON p.portal_id = t.portal_id WHERE t.digest = ANY($1::text[])',
      [[...new Set(digests)]],
      'find-pbx-tokens',
    );
    const found = new Map(
      rows.map((row) => [row.digest, { ...tokenOf(row), status: row.status as PortalStatus }]),
    );
    return digests.map((digest) => found.get(digest));
  }
}
