import { CrmEntityKind } from './crm-store';
import { OutboundWebhook } from './event-hub';
import { register } from './methods/telephony';
import { isPlainObject } from './params';
import { PortalState } from './portal-state';
import { SandboxPortalError } from './sandbox-portal-error';

/** What a test's click did: the portal's call and the event it fired. */
export interface ClickOutcome {
  CALL_ID: string;
  event: string;
  data: Record<string, string>;
}

export class EventControlError extends Error {}

/**
 * What happens on the portal when an employee clicks a number, a visitor asks for a callback or someone
 * edits the CRM: the call is registered as telephony.externalcall.register would, then the event fires.
 */
export class EventControls {
  constructor(private readonly state: PortalState) {}

  /** Webhook mode: the outbound webhook the portal posts the chosen events to, with its code. */
  setOutbound(body: unknown): Omit<OutboundWebhook, 'applicationToken'> | null {
    if (body === null || (isPlainObject(body) && body.url === null)) {
      this.state.events.outbound = null;
      return null;
    }
    if (!isPlainObject(body) || typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) {
      throw new EventControlError('url must be an http(s) URL');
    }
    if (typeof body.applicationToken !== 'string' || body.applicationToken === '') {
      throw new EventControlError('applicationToken is required');
    }
    const events = Array.isArray(body.events)
      ? body.events.map((event) => String(event).toUpperCase())
      : ['ONEXTERNALCALLSTART', 'ONEXTERNALCALLBACKSTART'];
    this.state.events.outbound = { url: body.url, applicationToken: body.applicationToken, events };
    return { url: body.url, events };
  }

  /** An employee clicks `phone` in the CRM: the portal registers the call (type 1, outgoing) and fires. */
  click(body: unknown, kind: 'click' | 'callback'): ClickOutcome {
    if (!isPlainObject(body) || typeof body.phone !== 'string' || body.phone === '') {
      throw new EventControlError(
        'send {"phone", "userId"?, "crmEntityType"?, "crmEntityId"?, "lineNumber"?}',
      );
    }
    const userId = Number.isInteger(body.userId) ? (body.userId as number) : 1;
    const params: Record<string, unknown> = {
      USER_ID: userId,
      PHONE_NUMBER: body.phone,
      TYPE: kind === 'click' ? 1 : 4,
      SHOW: 1,
    };
    if (typeof body.crmEntityType === 'string') params.CRM_ENTITY_TYPE = body.crmEntityType;
    if (Number.isInteger(body.crmEntityId)) params.CRM_ENTITY_ID = body.crmEntityId;
    if (typeof body.lineNumber === 'string') params.LINE_NUMBER = body.lineNumber;
    let answer: { CALL_ID: string; CRM_ENTITY_TYPE?: string; CRM_ENTITY_ID?: number };
    try {
      answer = register(params as never, {
        state: this.state,
        caller: { kind: 'webhook', userId, scopes: ['telephony', 'crm'] },
        now: this.state.now(),
      }).result as typeof answer;
    } catch (error) {
      if (error instanceof SandboxPortalError) throw new EventControlError(error.message);
      throw error;
    }
    const data: Record<string, string> = {
      PHONE_NUMBER: body.phone,
      CALL_ID: answer.CALL_ID,
      CRM_ENTITY_TYPE: String(answer.CRM_ENTITY_TYPE ?? body.crmEntityType ?? ''),
      CRM_ENTITY_ID: String(answer.CRM_ENTITY_ID ?? body.crmEntityId ?? ''),
      LINE_NUMBER: typeof body.lineNumber === 'string' ? body.lineNumber : '',
    };
    if (kind === 'click') Object.assign(data, { USER_ID: String(userId), CALL_LIST_ID: '0', IS_MOBILE: '0' });
    else if (typeof body.text === 'string') data.TEXT = body.text;
    const event = kind === 'click' ? 'ONEXTERNALCALLSTART' : 'ONEXTERNALCALLBACKSTART';
    this.state.events.fire(event, data, userId);
    return { CALL_ID: answer.CALL_ID, event, data };
  }

  /**
   * A CRM edit: `{fields}` adds a record, `{id, fields}` changes it, `{id, delete: true}` deletes it;
   * then ONCRM<ENTITY>ADD|UPDATE|DELETE fires with data[FIELDS][ID].
   */
  crmChange(entity: CrmEntityKind, body: unknown): { ID: number; event: string } {
    if (!isPlainObject(body)) {
      throw new EventControlError('send {"fields"} | {"id", "fields"} | {"id", "delete": true}');
    }
    const { crm } = this.state;
    const now = this.state.now();
    const fields = isPlainObject(body.fields) ? body.fields : {};
    let id: number;
    let change: 'ADD' | 'UPDATE' | 'DELETE';
    if (body.id === undefined) {
      id = crm.add(entity, fields, 1, now).ID;
      change = 'ADD';
    } else {
      id = Number(body.id);
      const record = crm.get(entity, id);
      if (!record) throw new EventControlError(`no ${entity} ${id}`);
      if (body.delete === true) {
        crm.delete(entity, id);
        change = 'DELETE';
      } else {
        crm.update(entity, record, fields, 1, now);
        change = 'UPDATE';
      }
    }
    const event = `ONCRM${entity}${change}`;
    this.state.events.fire(event, { FIELDS: { ID: String(id) } });
    return { ID: id, event };
  }

  /** Bound handlers, the offline queue, lines and the posts made (no tokens). */
  inspect(): unknown {
    const { events } = this.state;
    return {
      bindings: events.bindings,
      offline: events.offline,
      lines: events.lines,
      posts: events.posts,
      outbound: events.outbound && { url: events.outbound.url, events: events.outbound.events },
    };
  }
}
