import { oauthSettings } from '../auth/oauth-settings';
import { EgressPolicy } from '../common/egress';
import {
  AuthSettings,
  DeliverySettings,
  DialSettings,
  EventSettings,
  FollowSettings,
  IntakeSettings,
  LookupSettings,
  PortalSettings,
  RecordingSettings,
} from '../config/settings';
import { PortalRecord } from '../store/portal-store';
import { PortalScopedSettings } from './portal-scoped-settings';

/** The environment's views a single-portal deployment's one portal is seeded from. */
export interface SeedSettings {
  portalId: string;
  auth: AuthSettings;
  portal: PortalSettings;
  delivery: DeliverySettings;
  lookup: LookupSettings;
  recording: RecordingSettings;
  events: EventSettings;
  dial: DialSettings;
  follow: FollowSettings;
  intake: IntakeSettings;
  /** The operator's own settings reach wherever they point (single mode's policy). */
  egress: EgressPolicy;
}

/**
 * Single-portal mode is the portal registry serving one portal: this record, seeded from the environment
 * (B24_WEBHOOK_URL, or B24_PORTAL_URL with OAuth) and never stored, so every replica reads the same one.
 */
export interface SeededPortal {
  record: PortalRecord;
  scoped: PortalScopedSettings;
}

export function seededPortal(seed: SeedSettings): SeededPortal {
  const { portalId, auth, portal } = seed;
  // The portal's address (B24_PORTAL_URL), else the webhook's: what the page shows as the portal.
  const address = auth.portalUrl ?? auth.webhookUrl;
  let origin = '';
  try {
    origin = address ? new URL(address).origin : '';
  } catch {
    // checked at start-up; the sandbox may run without an address
  }
  const record: PortalRecord = {
    portalId,
    domain: origin ? new URL(origin).host : portalId,
    clientEndpoint: origin ? `${origin}/rest/` : '',
    status: 'active',
    installedAt: 0,
    settings: {},
    updatedAt: 0,
  };
  if (auth.mode !== 'oauth' && !auth.webhookUrl) throw new Error('B24_WEBHOOK_URL: not set');
  const scoped: PortalScopedSettings = Object.freeze({
    portalId,
    access:
      auth.mode === 'oauth'
        ? { oauth: oauthSettings(auth, portal, portalId) }
        : { webhookUrl: auth.webhookUrl as string },
    portal,
    lookup: seed.lookup,
    delivery: seed.delivery,
    recording: seed.recording,
    events: seed.events,
    // Always built: with DIAL_MODE unset it subscribes to nothing, and readiness shows it off.
    dial: seed.dial,
    follow: seed.follow.mode || seed.follow.cdrUrl ? seed.follow : undefined,
    followReading: {
      internalMaxDigits: seed.intake.internalMaxDigits,
      recordingTemplate: seed.intake.recordingUrls.asterisk,
      freeswitchRecordingTemplate: seed.intake.recordingUrls.freeswitch,
      timeZone: seed.intake.timeZone,
    },
    egress: seed.egress,
    metricsLabel: portalId,
    problems: Object.freeze([]),
  });
  return { record, scoped };
}
