import {
  BadRequestException,
  Injectable,
  Logger,
  Optional,
  ServiceUnavailableException,
} from '@nestjs/common';
import { PortalCrm } from '../crm/portal-crm';
import { CallEvent } from '../calls/call';
import { CallIntake } from '../intake/call-intake.service';
import { IntakeSettings } from '../config/settings';
import { BridgeMetrics } from '../metrics/bridge-metrics';
import { IngestResult } from '../store/call-store';
import { FieldProblem, parseCallEvents } from './call-event-validation';

/** Where an event field came from in a PBX's own format (`phoneNumber` → `src`), for 400s in its words. */
export type FieldSources = Partial<Record<string, string>>;

/**
 * One way in for call events, whoever wrote them: the JSON API's body, or what a PBX adapter made of a
 * PBX's own record. Validation (400), durable storage before the answer, idempotency and the event
 * metrics are therefore the same for every PBX.
 */
@Injectable()
export class CallEventSubmission {
  private readonly logger = new Logger('PbxIntake');

  constructor(
    private readonly intake: CallIntake,
    private readonly settings: IntakeSettings,
    private readonly metrics: BridgeMetrics,
    @Optional() private readonly crm?: PortalCrm,
  ) {}

  /** `notes` are what an adapter adds to every event beyond the PBX's fields (how it chose the direction). */
  async submit(
    portalId: string,
    body: unknown,
    sources: FieldSources = {},
    notes: Pick<CallEvent, 'directionInferred'> = {},
  ): Promise<IngestResult> {
    let events: CallEvent[];
    try {
      const country = this.crm?.defaultCountryOf(portalId) ?? this.settings.defaultCountry;
      events = parseCallEvents(body, country).map((event) => ({ ...event, ...notes }));
    } catch (error) {
      this.metrics.events.inc({ outcome: 'rejected' }, Array.isArray(body) ? body.length : 1);
      throw withSources(error, sources);
    }
    const result = await this.intake.submit(portalId, events).catch((error: Error) => {
      // Nothing was committed: the PBX must send the body again, which is safe (idempotent per event).
      this.logger.error(`could not store ${events.length} call events: ${error.message}`);
      throw new ServiceUnavailableException(
        'the store could not commit the events; nothing was stored, retry',
      );
    });
    this.metrics.events.inc({ outcome: 'accepted' }, result.accepted);
    this.metrics.events.inc({ outcome: 'duplicate' }, result.duplicates);
    return result;
  }
}

/** Adds, to each field a 400 names, the PBX field it was read from. */
function withSources(error: unknown, sources: FieldSources): unknown {
  if (!(error instanceof BadRequestException) || Object.keys(sources).length === 0) return error;
  const answer = error.getResponse() as { errors?: FieldProblem[] };
  const errors = (answer.errors ?? []).map((problem) => {
    const source = sources[problem.field];
    return source ? { ...problem, pbxField: source } : problem;
  });
  return new BadRequestException({ ...answer, errors });
}
