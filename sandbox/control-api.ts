import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { SandboxControls } from './controls';
import { CrmEntityKind } from './crm-store';
import { EventControlError, EventControls } from './event-controls';
import { parseFaultSpec } from './faults';
import { readBody, sendJson } from './http-io';
import { Inspection } from './inspection';
import { isPlainObject } from './params';
import { OPERATING_CHARGES, OperatingCharge } from './operating-time';
import { PortalState } from './portal-state';
import { WEBHOOK_SCOPES } from './seed';

/** Test-only control API under /_sandbox/, a prefix no portal path uses. */
export const CONTROL_PREFIX = '/_sandbox';

const CRM_PATHS: Record<string, CrmEntityKind> = {
  leads: 'LEAD',
  contacts: 'CONTACT',
  companies: 'COMPANY',
  deals: 'DEAL',
};

interface Reply {
  status: number;
  body: unknown;
}

const ok = (body: unknown): Reply => ({ status: 200, body });
const fail = (status: number, message: string): Reply => ({ status, body: { error: message } });

export class ControlApi {
  private readonly events: EventControls;

  constructor(
    private readonly state: PortalState,
    private readonly inspection: Inspection,
    private readonly controls: SandboxControls,
  ) {
    this.events = new EventControls(state);
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const raw = await readBody(req, 1024 * 1024);
    let body: unknown = {};
    if (raw !== null && raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return sendJson(res, 400, { error: 'the body must be JSON' });
      }
    }
    const path = url.pathname.slice(CONTROL_PREFIX.length).replace(/\/+$/, '') || '/';
    const reply = await this.route(req.method ?? 'GET', path, url.searchParams, body);
    sendJson(res, reply.status, reply.body);
  }

  private async route(method: string, path: string, query: URLSearchParams, body: unknown): Promise<Reply> {
    const segments = path.split('/').filter(Boolean);
    const [head, clientId, action] = segments;
    if (method === 'GET') {
      if (path === '/') return ok({ endpoints: ENDPOINTS });
      if (path === '/calls') return ok(this.inspection.calls(callQuery(query)));
      if (path === '/transcripts') return ok(this.inspection.transcripts(query.get('CALL_ID') ?? undefined));
      if (segments.length === 1 && head in CRM_PATHS) return ok(this.inspection.crm(CRM_PATHS[head]));
      if (path === '/tasks') return ok(this.inspection.tasks(Object.fromEntries(query)));
      if (path === '/users') return ok(this.inspection.users());
      if (path === '/requests') {
        const since = query.get('since');
        return ok(this.state.requestLog.list(since === null ? undefined : Number(since)));
      }
      if (path === '/stats') return ok(this.state.requestLog.snapshot());
      if (path === '/budget') return ok(this.inspection.budget());
      if (path === '/operating') return ok(this.controls.operating());
      if (path === '/faults') return ok(this.state.faults.list());
      if (path === '/credentials') return ok(this.credentials());
      if (path === '/events') return ok(this.events.inspect());
    }
    if (method === 'POST') {
      if (path === '/faults') {
        const spec = parseFaultSpec(body);
        return typeof spec === 'string'
          ? fail(400, spec)
          : { status: 201, body: this.controls.injectFault(spec) };
      }
      if (path === '/reset') {
        this.controls.reset();
        return ok({ reset: true });
      }
      if (path === '/clock') return this.advanceClock(body);
      if (path === '/performance') return this.setPerformance(body);
      if (path === '/operating/use') return this.chargeOtherUse(body);
      if (path === '/webhooks') return this.addWebhook(body);
      if (path === '/events/outbound' || path === '/click' || path === '/callback' || head === 'crm') {
        return this.eventAction(path, segments, body);
      }
      if (head === 'apps' && segments.length === 3) {
        return this.appAction(decodeURIComponent(clientId), action, body);
      }
    }
    if (method === 'DELETE' && path === '/faults') {
      this.controls.clearFaults();
      return ok({ cleared: true });
    }
    return fail(404, `no control endpoint ${method} ${CONTROL_PREFIX}${path}`);
  }

  private advanceClock(body: unknown): Reply {
    if (!isPlainObject(body)) return fail(400, 'send {"advanceSec": n} or {"advanceMs": n}');
    const ms =
      typeof body.advanceMs === 'number'
        ? body.advanceMs
        : typeof body.advanceSec === 'number'
          ? body.advanceSec * 1000
          : NaN;
    if (!Number.isFinite(ms) || ms < 0) {
      return fail(400, 'advanceSec/advanceMs must be a non-negative number');
    }
    return ok({ now: this.controls.advanceClock(ms) });
  }

  private chargeOtherUse(body: unknown): Reply {
    if (!isPlainObject(body) || typeof body.method !== 'string' || body.method === '') {
      return fail(400, 'send {"method": name, "sec": n, "agoSec"?: n}');
    }
    const { sec, agoSec = 0 } = body;
    if (typeof sec !== 'number' || !Number.isFinite(sec) || sec <= 0) {
      return fail(400, 'sec must be a positive number');
    }
    if (typeof agoSec !== 'number' || !Number.isFinite(agoSec) || agoSec < 0) {
      return fail(400, 'agoSec must be a non-negative number');
    }
    return ok(this.controls.chargeOtherUse(body.method, sec, agoSec));
  }

  private setPerformance(body: unknown): Reply {
    if (!isPlainObject(body)) {
      return fail(
        400,
        'send {"commandMs"?, "operatingWindowSec"?, "operatingLimitSec"?, "operatingCharge"?}',
      );
    }
    const charge = body.operatingCharge;
    if (charge !== undefined && !OPERATING_CHARGES.includes(charge as OperatingCharge)) {
      return fail(400, `operatingCharge must be one of ${OPERATING_CHARGES.join(', ')}`);
    }
    const fields = {
      commandMs: 'commandMs',
      operatingWindowSec: 'windowSec',
      operatingLimitSec: 'limitSec',
    } as const;
    const change: Partial<Record<(typeof fields)[keyof typeof fields], number>> = {};
    for (const [field, key] of Object.entries(fields)) {
      const value = body[field];
      if (value === undefined) continue;
      const positive = field !== 'commandMs';
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (positive && value === 0)) {
        return fail(400, `${field} must be a ${positive ? 'positive' : 'non-negative'} number`);
      }
      change[key] = value;
    }
    return ok(
      this.controls.setPerformance(
        charge === undefined ? change : { ...change, charge: charge as OperatingCharge },
      ),
    );
  }

  private addWebhook(body: unknown): Reply {
    if (
      !isPlainObject(body) ||
      !Number.isInteger(body.userId) ||
      !this.state.employees.get(body.userId as number)
    ) {
      return fail(400, 'userId must be the id of an existing employee');
    }
    const scopes = Array.isArray(body.scopes) ? body.scopes.map(String) : [...WEBHOOK_SCOPES];
    const code =
      typeof body.code === 'string' && /^[A-Za-z0-9]{8,64}$/.test(body.code) ? body.code : randomCode();
    return { status: 201, body: this.controls.addWebhook({ userId: body.userId as number, code, scopes }) };
  }

  private async eventAction(path: string, segments: string[], body: unknown): Promise<Reply> {
    try {
      if (path === '/events/outbound') return ok({ outbound: this.events.setOutbound(body) });
      if (path === '/click') return ok(this.events.click(body, 'click'));
      if (path === '/callback') return ok(this.events.click(body, 'callback'));
      const entity = CRM_EVENT_PATHS[segments[1]];
      if (segments.length !== 2 || !entity) return fail(404, 'POST /_sandbox/crm/contact|company|lead');
      return ok(this.events.crmChange(entity, body));
    } catch (error) {
      if (error instanceof EventControlError) return fail(400, error.message);
      throw error;
    }
  }

  private async appAction(clientId: string, action: string, body: unknown): Promise<Reply> {
    if (!this.state.credentials.app(clientId)) return fail(404, `no application with client id ${clientId}`);
    if (action === 'revoke') return ok({ revokedTokenPairs: this.controls.revokeApp(clientId) });
    if (action === 'tokens') {
      const userId = isPlainObject(body) && Number.isInteger(body.userId) ? (body.userId as number) : 1;
      return ok(this.controls.issueTokens(clientId, userId));
    }
    if (action === 'install' || action === 'uninstall') {
      const handlerUrl = isPlainObject(body) ? body.handlerUrl : undefined;
      // An uninstall posts to the handlers the application bound for ONAPPUNINSTALL; handlerUrl is extra.
      const optional = action === 'uninstall' && handlerUrl === undefined;
      if (!optional && (typeof handlerUrl !== 'string' || !/^https?:\/\//.test(handlerUrl))) {
        return fail(400, 'handlerUrl must be an http(s) URL');
      }
      const url = handlerUrl as string | undefined;
      return ok(
        action === 'install'
          ? await this.controls.installApp(clientId, url as string)
          : await this.controls.uninstallApp(clientId, url),
      );
    }
    return fail(404, `no application action ${action}`);
  }

  private credentials(): unknown {
    return {
      webhooks: this.state.credentials
        .webhookList()
        .map((hook) => ({ ...hook, url: this.controls.webhookUrl(hook) })),
      apps: this.state.credentials.appList(),
      memberId: this.state.identity.memberId,
      domain: this.state.identity.domain,
    };
  }
}

function callQuery(query: URLSearchParams) {
  const userId = query.get('USER_ID');
  return {
    CALL_ID: query.get('CALL_ID') ?? undefined,
    EXTERNAL_CALL_ID: query.get('EXTERNAL_CALL_ID') ?? undefined,
    USER_ID: userId === null ? undefined : Number(userId),
  };
}

function randomCode(): string {
  return randomBytes(8).toString('hex');
}

const CRM_EVENT_PATHS: Record<string, CrmEntityKind> = {
  contact: 'CONTACT',
  company: 'COMPANY',
  lead: 'LEAD',
};

const ENDPOINTS = [
  'GET /_sandbox/events (bound handlers, offline queue, lines, posts)',
  'POST /_sandbox/events/outbound {url, applicationToken, events?} (webhook mode; null to remove)',
  'POST /_sandbox/click {phone, userId?, crmEntityType?, crmEntityId?, lineNumber?}',
  'POST /_sandbox/callback {phone, text?, crmEntityType?, crmEntityId?}',
  'POST /_sandbox/crm/contact|company|lead {fields} | {id, fields} | {id, delete: true}',
  'GET /_sandbox/calls?CALL_ID=&EXTERNAL_CALL_ID=&USER_ID=',
  'GET /_sandbox/transcripts?CALL_ID= (attached transcripts, oldest first)',
  'GET /_sandbox/leads | contacts | companies | deals | tasks | users',
  'GET /_sandbox/tasks?xmlId=&responsibleId=&status=',
  'GET /_sandbox/requests?since=<ms>',
  'GET /_sandbox/stats',
  'GET /_sandbox/budget',
  'GET /_sandbox/operating',
  'POST /_sandbox/performance {commandMs?, operatingWindowSec?, operatingLimitSec?, operatingCharge?: run|batch-whole|batch-upfront|batch-upfront-no-reset}',
  "POST /_sandbox/operating/use {method, sec, agoSec?} (another application's use of a method)",
  'GET /_sandbox/credentials',
  'GET|POST|DELETE /_sandbox/faults {kind: outage|http|latency|lose-answer|redirect|decline|refuse, …}',
  'POST /_sandbox/reset',
  'POST /_sandbox/clock {advanceSec|advanceMs}',
  'POST /_sandbox/webhooks {userId, scopes?, code?}',
  'POST /_sandbox/apps/:clientId/install {handlerUrl}',
  'POST /_sandbox/apps/:clientId/uninstall {handlerUrl?} (tokens revoked, ONAPPUNINSTALL posted to the bound handlers and handlerUrl)',
  'POST /_sandbox/apps/:clientId/revoke',
  'GET /_sandbox/portals (the tenant portals, root only)',
  'POST /_sandbox/portals {count?, memberId?, name?, domain?, rateLimitRps?, rateBurst?, requestLogLimit?, commandMs?} (root only)',
  'POST /_sandbox/apps/:clientId/tokens {userId?}',
];
