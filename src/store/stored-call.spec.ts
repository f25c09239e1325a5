import { CallCard, CallDelivery, CallParty, CallPortal, CallRecord, CallRecording } from '../calls/call';
import { markCardHidden, markFinished, plan } from '../calls/call-lifecycle';
import { toStatusView } from '../calls/call-status';
import { planBatch } from '../calls/step-planner';
import { callColumnsOf, callOf } from './call-rows';
import { callFromStored, callToStored, FlatCallRecord, upgradeFlat } from './stored-call';
import { PARKED, PARKED_HIDDEN, RINGING, RINGING_FINISHED } from '../../test/fixtures/flat-calls';

/*
 * What each row read as before the parts (its status, columns, next commands) was taken from the flat
 * record's code and is written out below.
 */
const withoutData = (call: CallRecord) => {
  const { data, ...columns } = callColumnsOf(call);
  return { columns, data };
};

describe('stored calls', () => {
  it('reads a flat row as its parts, every field where its part keeps it', () => {
    expect(callFromStored(RINGING)).toEqual({
      portalId: 'portal-1',
      callId: 'pbx-42',
      createdAt: 1764000000000,
      updatedAt: 1764000000004,
      party: {
        direction: 'inbound',
        phoneNumber: '+74951234567',
        extension: '101',
        startedAt: '2025-11-24T19:00:00+03:00',
        heardRinging: true,
        heardStart: true,
        ringing: ['101', '102', '103'],
        ended: {
          at: '2025-11-24T19:00:30+03:00',
          durationSec: 0,
          status: 'missed',
          recordingUrl: 'https://pbx.example/rec/42.mp3',
        },
      },
      card: {
        registerKey: '101',
        shown: ['101', '102', '103'],
        maybe: [],
        sending: {},
        users: { '102': 12 },
      },
      portal: {
        user: { USER_PHONE_INNER: '101' },
        finishUser: { USER_PHONE_INNER: '101' },
        binding: { CRM_ENTITY_TYPE: 'CONTACT', CRM_ENTITY_ID: 7 },
        routedToDefaultUser: false,
        callId: 'externalCall.abc.1',
        entityType: 'CONTACT',
        entityId: 7,
        finished: false,
      },
      recording: { attached: false, failed: false, file: { source: 'fetch', fetchUntil: 1764000600004 } },
      task: { deadline: '2025-11-24T20:00:30+03:00' },
      delivery: {
        state: 'registered',
        nextStep: 'finish',
        dueAt: 1764000009000,
        retryAt: 1764000009000,
        attempts: 2,
        stepsSent: { register: 1, show: 1 },
        refused: { finish: 1 },
        batchLimit: 2,
        consecutiveFailures: 1,
        failed: false,
        lastError: 'portal timeout (retrying)',
      },
    });
  });

  it('a flat row shows, plans and selects as it did: status, columns, next commands', () => {
    const call = callFromStored(RINGING);
    expect(toStatusView(call)).toEqual({
      callId: 'pbx-42',
      state: 'registered',
      crm: {
        callId: 'externalCall.abc.1',
        entityType: 'CONTACT',
        entityId: 7,
        createdLead: null,
      },
      attempts: 2,
      lastError: 'portal timeout (retrying)',
      nextStep: 'finish',
      waitingForStart: false,
      routedToDefaultUser: false,
      recording: 'pending',
      recordingDetail: {
        via: 'fetch',
        bytes: null,
        upload: null,
      },
      card: {
        ringing: ['101', '102', '103'],
        answeredBy: null,
        openFor: ['101', '102', '103'],
      },
      missedTask: {
        id: null,
        state: 'pending',
        deadline: '2025-11-24T20:00:30+03:00',
        calledBackBy: null,
      },
      updatedAt: '2025-11-24T16:00:00.004Z',
    });
    expect(withoutData(call).columns).toEqual({
      portal_id: 'portal-1',
      call_id: 'pbx-42',
      state: 'registered',
      next_step: 'finish',
      due_at: 1764000009000,
      created_at: 1764000000000,
      updated_at: 1764000000004,
      priority: 1,
      callback_phone: '+74951234567',
      callback_until: 1764003630000,
    });
    expect(planBatch([call], { maxCommands: 50 }).plan.commands(new Map([[call.callId, call]]))).toEqual([
      {
        label: 'finish_0',
        method: 'telephony.externalcall.finish',
        params: {
          USER_PHONE_INNER: '101',
          CALL_ID: 'externalCall.abc.1',
          DURATION: 0,
          STATUS_CODE: '304',
        },
      },
      {
        label: 'hide_0',
        method: 'telephony.externalcall.hide',
        params: {
          CALL_ID: 'externalCall.abc.1',
        },
      },
    ]);
    expect(plan(call, 1764000000005)).toEqual(call);
  });

  it('a legacy parked call whose card has no key still closes it for its employee', () => {
    const call = callFromStored(PARKED);
    expect(call.card).toEqual({ toHide: true, userIds: [5] });
    expect(toStatusView(call)).toEqual({
      callId: 'pbx-7',
      state: 'failed',
      crm: {
        callId: 'externalCall.p.7',
        entityType: null,
        entityId: null,
        createdLead: null,
      },
      attempts: 4,
      lastError: 'finish: refused (refused 3 times)',
      nextStep: 'hide',
      waitingForStart: false,
      routedToDefaultUser: true,
      recording: 'none',
      card: {
        ringing: ['101'],
        answeredBy: null,
        openFor: [],
      },
      updatedAt: '2025-11-24T16:00:00.000Z',
    });
    expect(withoutData(call).columns).toEqual({
      portal_id: 'portal-1',
      call_id: 'pbx-7',
      state: 'failed',
      next_step: 'hide',
      due_at: 1764000000000,
      created_at: 1763990000000,
      updated_at: 1764000000000,
      priority: 1,
      callback_phone: null,
      callback_until: null,
    });
    expect(planBatch([call], { maxCommands: 50 }).plan.commands(new Map([[call.callId, call]]))).toEqual([
      {
        label: 'hide_0',
        method: 'telephony.externalcall.hide',
        params: {
          CALL_ID: 'externalCall.p.7',
          USER_ID: [5],
        },
      },
    ]);
  });

  it('the rules act on an upgraded row as the flat rules did on the row', () => {
    expect(markFinished(callFromStored(RINGING), 1764000000006)).toEqual(callFromStored(RINGING_FINISHED));
    expect(markCardHidden(callFromStored(PARKED), 1764000001000)).toEqual(callFromStored(PARKED_HIDDEN));
  });

  it('writes a row exactly as the flat record wrote it, so the previous release reads it', () => {
    // Each fixture is what the flat code stored (test/fixtures/flat-calls.ts): read, then written, it is
    // the same object, field for field.
    for (const stored of [RINGING, RINGING_FINISHED, PARKED, PARKED_HIDDEN]) {
      const call = callFromStored(stored);
      const { data } = withoutData(call);
      expect(JSON.parse(data)).toEqual(JSON.parse(stored));
      expect(JSON.parse(data)).not.toHaveProperty('delivery');
      expect(callOf({ data })).toEqual(call);
    }
  });

  it("keeps a call's line, its rule's terms and ignored in the flat row", () => {
    const call = callFromStored(RINGING);
    const lined = {
      ...call,
      party: { ...call.party, line: '+49301234567' },
      portal: { ...call.portal, lineTerms: { crmCreate: false, crmSource: 'WEB', defaultUserId: 9 } },
      delivery: { ...call.delivery, ignored: true },
    };
    const { data } = withoutData(lined);
    expect(JSON.parse(data)).toMatchObject({
      line: '+49301234567',
      lineTerms: { crmCreate: false, crmSource: 'WEB', defaultUserId: 9 },
      ignored: true,
    });
    expect(callFromStored(data)).toEqual(lined);
  });

  it('leaves out what a flat row did not have', () => {
    const flat = JSON.parse(PARKED) as FlatCallRecord;
    const parts = upgradeFlat(flat);
    expect(Object.keys(parts.party)).not.toContain('answeredBy');
    expect(Object.keys(parts.recording)).toEqual(['attached', 'failed']);
    expect('task' in parts).toBe(false);
  });

  it('every field of every part survives the flat row: written, then read, it is the same call', () => {
    // Required<…>: the compiler refuses this spec when a part gains a field the row would not carry.
    const party: Required<CallParty> = {
      direction: 'inbound',
      directionInferred: 'rule',
      phoneNumber: '+4930123',
      extension: '101',
      userId: 2,
      startedAt: '2026-12-03T10:00:00+01:00',
      line: '+4930555000',
      heardRinging: true,
      heardStart: true,
      ringing: ['101', '102'],
      ringingSinceAnswer: ['103'],
      answeredAt: '2026-12-03T10:00:05+01:00',
      answeredBy: '102',
      ended: {
        at: '2026-12-03T10:01:00+01:00',
        durationSec: 55,
        status: 'answered',
        recordingUrl: 'https://r',
      },
      holdUntil: 5,
      holdExpired: false,
    };
    const card: Required<CallCard> = {
      registerKey: '101',
      shown: ['101'],
      maybe: ['102'],
      sending: { show: { keys: ['102'], userIds: [3] }, hide: { keys: ['101'], userIds: [2] } },
      users: { '101': 2, '102': 3 },
      toHide: true,
      userIds: [2],
    };
    const portal: Required<CallPortal> = {
      user: { USER_ID: 2, USER_PHONE_INNER: '101' },
      finishUser: { USER_ID: 3 },
      binding: { CRM_ENTITY_TYPE: 'CONTACT', CRM_ENTITY_ID: 7 },
      routedToDefaultUser: false,
      callId: 'externalCall.1',
      clickToCall: { portalCallId: 'externalCall.1', matchedBy: 'click', finishedBy: 'other' },
      entityType: 'LEAD',
      entityId: 9,
      createdLead: 9,
      finished: true,
      lineTerms: { crmCreate: false, crmSource: 'WEB', defaultUserId: 4 },
    };
    const recording: Required<CallRecording> = {
      attached: false,
      failed: false,
      file: { source: 'fetch', bytes: 10, filename: 'a.mp3', upload: 'content', wireBytes: 16 },
    };
    const delivery: Required<CallDelivery> = {
      state: 'registered',
      nextStep: 'finish',
      dueAt: 6,
      retryAt: 7,
      attempts: 3,
      stepsSent: { register: 1 },
      refused: { finish: 1 },
      batchLimit: 1,
      consecutiveFailures: 1,
      failed: false,
      lastError: 'noted',
      ignored: false,
    };
    const call: Required<CallRecord> = {
      portalId: 'p',
      callId: 'c',
      createdAt: 1,
      updatedAt: 2,
      party,
      card,
      portal,
      recording,
      task: { deadline: '2026-12-03T11:00:00+01:00', id: 4, responsibleId: 2, addsSent: 1 },
      transcript: {
        state: 'pending',
        messages: [{ SIDE: 'Client', START_TIME: 0, STOP_TIME: 2, MESSAGE: 'hello' }],
        id: 7,
        firstTriedAt: 3,
        tries: 1,
        sends: 1,
        sendsCleared: 0,
      },
      delivery,
    };
    expect(callFromStored(callToStored(call))).toEqual(call);
  });
});
