import { randomUUID } from 'node:crypto';
import { PortalSignal, signalOf, SignalListeners } from '../portal-event-store';
import { SqlPortalEventStore } from '../sql-portal-event-store';
import { DB_CLOCK, PostgresDatabase } from './postgres-database';

/** NOTIFY channel of portal signals (payload: JSON with the schema, the sender and the signal). */
const SIGNAL_CHANNEL = 'bridge_portal_signals';

/** Portal events in PostgreSQL, timed by the database's clock; signals go to the other replicas by NOTIFY. */
export class PostgresPortalEventStore extends SqlPortalEventStore {
  private readonly listeners = new SignalListeners();
  /** This process's signals come back by NOTIFY too: they were handled here already. */
  private readonly origin = randomUUID();
  private stopListening?: () => void;

  constructor(private readonly database: PostgresDatabase) {
    super(database, () => DB_CLOCK);
  }

  /**
   * Here at once, to the other replicas by NOTIFY (delivered within milliseconds of this statement, on
   * the connection every replica keeps listening; the schema keeps deployments sharing a database apart).
   */
  async publish(signal: PortalSignal): Promise<void> {
    this.listeners.emit(signal);
    await this.database.query('SELECT pg_notify($1, $2)', [
      SIGNAL_CHANNEL,
      JSON.stringify({ schema: this.database.schema, origin: this.origin, signal }),
    ]);
  }

  watch(listener: (signal: PortalSignal) => void): () => void {
    this.stopListening ??= this.database.listen(SIGNAL_CHANNEL, (payload) => this.heard(payload));
    return this.listeners.add(listener);
  }

  private heard(payload: string): void {
    let message: { schema?: unknown; origin?: unknown; signal?: unknown };
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (message.schema !== this.database.schema || message.origin === this.origin) return;
    const signal = signalOf(message.signal);
    if (signal) this.listeners.emit(signal);
  }
}
