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
import { SeedDefaults } from './portal-scoped-settings';

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
 * (B24_WEBHOOK_URL, or B24_PORTAL_URL with OAuth). Its row is stored (created at start, `settings: {}`), so
 * the page's changes reach every replica; its settings are the environment's with the stored ones over them.
 */
export interface SeededPortal {
  /** The record as the environment names it; the stored one (its settings, its version) is read at start. */
  record: PortalRecord;
  defaults: SeedDefaults;
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
  const defaults: SeedDefaults = Object.freeze({
    access:
      auth.mode === 'oauth'
        ? { oauth: oauthSettings(auth, portal, portalId) }
        : { webhookUrl: auth.webhookUrl as string },
    dial: seed.dial,
    follow: seed.follow.mode || seed.follow.cdrUrl ? seed.follow : undefined,
    recordingFetch: {
      fetchHosts: seed.recording.fetchHosts,
      fetchAuthorization: seed.recording.fetchAuthorization,
    },
  });
  return { record, defaults };
}
