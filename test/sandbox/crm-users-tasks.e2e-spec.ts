import { EmployeeSeed, SandboxPortal } from '../../sandbox';
import { Json, query, request } from './http';

describe('sandbox portal: users, CRM and tasks', () => {
  let portal: SandboxPortal;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    request(`${portal.webhookUrl}${method}`, { json: params });
  const get = (method: string, params: Record<string, unknown> = {}) =>
    request(`${portal.webhookUrl}${method}?${query(params)}`);

  beforeAll(async () => {
    // Bulk set-up calls would otherwise run into the request budget, which has its own tests.
    portal = await SandboxPortal.start({ rateBurst: 100000 });
  });
  afterAll(() => portal.close());
  beforeEach(() => portal.reset());

  describe('users', () => {
    it('finds an employee by internal number, active state and id', async () => {
      expect((await get('user.get', { FILTER: { UF_PHONE_INNER: '102' } })).body).toMatchObject({
        result: [{ ID: '3', NAME: 'Boris', LAST_NAME: 'Chen', ACTIVE: true, UF_PHONE_INNER: '102' }],
        total: 1,
      });
      const active = await get('user.get', { FILTER: { ACTIVE: true } });
      expect(active.body.result.map((user: Json) => user.ID)).toEqual(['1', '2', '3', '4']);
      const inactive = await get('user.get', { FILTER: { UF_PHONE_INNER: '109', ACTIVE: 'N' } });
      expect(inactive.body.result).toEqual([expect.objectContaining({ ID: '5', ACTIVE: false })]);
      expect((await get('user.get', { ID: 4 })).body.result.map((user: Json) => user.ID)).toEqual(['4']);
      expect((await get('user.get', { FILTER: { ID: 99 } })).body).toMatchObject({ result: [], total: 0 });
    });

    it('pages 50 employees at a time with start, next and total', async () => {
      const employees: EmployeeSeed[] = Array.from({ length: 120 }, (_, i) => ({
        ID: i + 1,
        NAME: `E${i + 1}`,
        LAST_NAME: 'Staff',
        EMAIL: `e${i + 1}@sandbox.test`,
        ACTIVE: true,
        UF_PHONE_INNER: String(200 + i),
      }));
      const big = await SandboxPortal.start({ seed: { employees } });
      try {
        const page = (start?: number) =>
          request(`${big.webhookUrl}user.get${start === undefined ? '' : `?start=${start}`}`);
        const first = await page();
        expect([
          first.body.result.length,
          first.body.next,
          first.body.total,
          first.body.result[0].ID,
        ]).toEqual([50, 50, 120, '1']);
        const second = await page(50);
        expect([
          second.body.result.length,
          second.body.next,
          second.body.total,
          second.body.result[0].ID,
        ]).toEqual([50, 100, 120, '51']);
        const last = await page(100);
        expect([last.body.result.length, last.body.next, last.body.total]).toEqual([20, undefined, 120]);
        expect('next' in last.body).toBe(false);
      } finally {
        await big.close();
      }
    });

    it('tells who the credential acts for', async () => {
      expect((await call('user.current')).body.result).toMatchObject({
        ID: '1',
        NAME: 'Admin',
        UF_PHONE_INNER: '100',
      });
    });
  });

  describe('CRM records', () => {
    it('adds, reads, updates and deletes a record of each entity', async () => {
      for (const entity of ['lead', 'contact', 'company', 'deal']) {
        const fields =
          entity === 'deal'
            ? { TITLE: 'Deal', CONTACT_ID: 1, OPPORTUNITY: 500, CLOSEDATE: '2026-12-31T18:00:00+01:00' }
            : { TITLE: 'T', NAME: 'N', PHONE: [{ VALUE: '+49 30 111', VALUE_TYPE: 'WORK' }] };
        const added = await call(`crm.${entity}.add`, { fields });
        expect({ entity, status: added.status, id: added.body.result }).toEqual({
          entity,
          status: 200,
          id: expect.any(Number),
        });
        const id = added.body.result;
        expect((await call(`crm.${entity}.update`, { id, fields: { ASSIGNED_BY_ID: 3 } })).body.result).toBe(
          true,
        );
        const read = await call(`crm.${entity}.get`, { id });
        expect(read.body.result).toMatchObject({
          ID: String(id),
          ASSIGNED_BY_ID: '3',
          CREATED_BY_ID: '1',
          DATE_MODIFY: expect.stringMatching(/\+00:00$/),
        });
        expect((await call(`crm.${entity}.delete`, { id })).body.result).toBe(true);
        expect(await call(`crm.${entity}.get`, { id })).toMatchObject({
          status: 400,
          body: { error: '', error_description: 'Not found' },
        });
      }
      const deal = await call('crm.deal.get', { id: 1 });
      expect(deal.body.result).toMatchObject({
        TITLE: 'Acme renewal',
        STAGE_ID: 'NEW',
        OPPORTUNITY: '1200',
        CURRENCY_ID: 'EUR',
        CONTACT_ID: '1',
      });
      expect(await call('crm.deal.add', { fields: { TITLE: 'x', CONTACT_ID: 999 } })).toMatchObject({
        status: 400,
        body: { error: '' },
      });
      expect(await call('crm.lead.add', {})).toMatchObject({
        status: 400,
        body: { error: '', error_description: "Parameter 'fields' must be array." },
      });
      expect(await call('crm.lead.get', {})).toMatchObject({
        status: 400,
        body: { error: '', error_description: 'ID is not defined or invalid.' },
      });
    });

    it('changes, adds and removes phone entries on update', async () => {
      const id = (
        await call('crm.contact.add', {
          fields: { NAME: 'P', PHONE: [{ VALUE: '+49 1', VALUE_TYPE: 'WORK' }] },
        })
      ).body.result;
      const [entry] = (await call('crm.contact.get', { id })).body.result.PHONE;
      await call('crm.contact.update', {
        id,
        fields: {
          PHONE: [
            { ID: entry.ID, VALUE: '+49 2' },
            { VALUE: '+49 3', VALUE_TYPE: 'MOBILE' },
          ],
        },
      });
      const phones = (await call('crm.contact.get', { id })).body.result.PHONE;
      expect(phones.map((phone: Json) => [phone.VALUE, phone.VALUE_TYPE])).toEqual([
        ['+49 2', 'WORK'],
        ['+49 3', 'MOBILE'],
      ]);
      await call('crm.contact.update', { id, fields: { PHONE: [{ ID: entry.ID, VALUE: '' }] } });
      expect(
        (await call('crm.contact.get', { id })).body.result.PHONE.map((phone: Json) => phone.VALUE),
      ).toEqual(['+49 3']);
    });

    it('lists with select, filters by prefix operators and PHONE, orders, and pages by 50', async () => {
      for (let i = 0; i < 60; i += 1) {
        await call('crm.lead.add', {
          fields: { TITLE: `Bulk ${i}`, PHONE: [{ VALUE: `+49 30 9${i}`, VALUE_TYPE: 'WORK' }] },
        });
      }
      const first = await get('crm.lead.list', { order: { ID: 'ASC' }, select: ['ID', 'TITLE'] });
      expect([first.body.result.length, first.body.next, first.body.total]).toEqual([50, 50, 63]);
      expect(first.body.result[0]).toEqual({ ID: '1', TITLE: 'Website enquiry' });
      const second = await get('crm.lead.list', { order: { ID: 'ASC' }, start: 50 });
      expect([second.body.result.length, second.body.total, 'next' in second.body]).toEqual([13, 63, false]);
      const fast = await get('crm.lead.list', { order: { ID: 'ASC' }, filter: { '>ID': 60 }, start: -1 });
      expect(fast.body.result.map((lead: Json) => lead.ID)).toEqual(['61', '62', '63']);
      expect(['total' in fast.body, 'next' in fast.body]).toEqual([false, false]);
      const desc = await get('crm.lead.list', { order: { ID: 'DESC' }, filter: { '<=ID': 3 } });
      expect(desc.body.result.map((lead: Json) => lead.ID)).toEqual(['3', '2', '1']);
      const byPhone = await get('crm.contact.list', {
        filter: { PHONE: '4915112345678' },
        select: ['*', 'PHONE'],
      });
      expect(byPhone.body.result).toEqual([
        expect.objectContaining({
          ID: '1',
          NAME: 'Max',
          PHONE: [expect.objectContaining({ VALUE: '+49 151 1234-5678' })],
        }),
      ]);
      const noPhone = await get('crm.contact.list', { filter: { ID: 1 } });
      expect(noPhone.body.result[0].PHONE).toBeUndefined();
      const byAssigned = await get('crm.contact.list', {
        filter: { ASSIGNED_BY_ID: 2 },
        order: { DATE_MODIFY: 'DESC' },
        select: ['ID'],
      });
      expect(byAssigned.body.result).toEqual([{ ID: '3' }, { ID: '1' }]);
    });

    it('finds duplicates by phone, per entity or all, answering [] for none', async () => {
      expect(
        (await call('crm.duplicate.findbycomm', { type: 'PHONE', values: ['+49 89 1234 5600'] })).body.result,
      ).toEqual({ LEAD: [3], COMPANY: [1] });
      expect(
        (
          await call('crm.duplicate.findbycomm', {
            type: 'PHONE',
            values: ['+4915112345678', '+1 415 555 0100'],
            entity_type: 'CONTACT',
          })
        ).body.result,
      ).toEqual({ CONTACT: [1, 3] });
      expect(
        (await call('crm.duplicate.findbycomm', { type: 'PHONE', values: ['+1 000'] })).body.result,
      ).toEqual([]);
      const tooMany = await call('crm.duplicate.findbycomm', {
        type: 'PHONE',
        values: Array.from({ length: 21 }, (_, i) => `+4930${i}`),
      });
      expect(tooMany).toMatchObject({
        status: 400,
        body: { error: '', error_description: 'Too many communication values: at most 20.' },
      });
    });

    it('lists and adds user fields (names start with UF_)', async () => {
      expect((await call('crm.deal.userfield.list')).body).toMatchObject({ result: [], total: 0 });
      const added = await call('crm.deal.userfield.add', {
        fields: {
          FIELD_NAME: 'UF_CRM_PBX_CALL',
          EDIT_FORM_LABEL: 'PBX call',
          LIST_COLUMN_LABEL: 'PBX call',
          USER_TYPE_ID: 'string',
          MANDATORY: 'N',
        },
      });
      expect(added.body.result).toEqual(expect.any(Number));
      expect((await call('crm.deal.userfield.list')).body.result).toEqual([
        expect.objectContaining({
          ID: String(added.body.result),
          ENTITY_ID: 'CRM_DEAL',
          FIELD_NAME: 'UF_CRM_PBX_CALL',
          USER_TYPE_ID: 'string',
          EDIT_FORM_LABEL: 'PBX call',
          MANDATORY: 'N',
        }),
      ]);
      expect(
        await call('crm.deal.userfield.add', { fields: { FIELD_NAME: 'PBX_CALL', USER_TYPE_ID: 'string' } }),
      ).toMatchObject({ status: 400, body: { error: 'ERROR_CORE' } });
      expect(
        await call('crm.deal.userfield.add', { fields: { FIELD_NAME: 'UF_CRM_PBX_CALL' } }),
      ).toMatchObject({ status: 400, body: { error: 'ERROR_CORE' } });
      const deal = (await call('crm.deal.add', { fields: { TITLE: 'UF deal', UF_CRM_PBX_CALL: 'pbx-1' } }))
        .body.result;
      expect((await call('crm.deal.get', { id: deal })).body.result.UF_CRM_PBX_CALL).toBe('pbx-1');
      expect((await call('crm.contact.userfield.list')).body.result).toEqual([]);
      expect((await call('crm.company.userfield.list')).body.result).toEqual([]);
    });
  });

  describe('tasks', () => {
    it('adds, reads, lists, updates and deletes tasks in {task}/{tasks} wrappers', async () => {
      const added = await call('tasks.task.add', {
        fields: {
          TITLE: 'Call back',
          DESCRIPTION: 'd'.repeat(400),
          RESPONSIBLE_ID: 2,
          DEADLINE: '2026-12-01T12:00:00+01:00',
          PRIORITY: 2,
        },
      });
      expect(added.status).toBe(200);
      expect(added.body.result.task).toMatchObject({
        id: expect.any(String),
        title: 'Call back',
        responsibleId: '2',
        createdBy: '1',
        deadline: '2026-12-01T11:00:00+00:00',
        priority: '2',
      });
      const taskId = added.body.result.task.id;
      expect((await call('tasks.task.get', { taskId })).body.result.task.title).toBe('Call back');
      expect(
        (await call('tasks.task.update', { taskId, fields: { TITLE: 'Called back' } })).body.result.task
          .title,
      ).toBe('Called back');
      const listed = await call('tasks.task.list', {
        filter: { RESPONSIBLE_ID: 2 },
        select: ['ID', 'TITLE'],
      });
      expect(listed.body).toMatchObject({
        result: { tasks: [{ id: taskId, title: 'Called back' }] },
        total: 1,
      });
      expect((await call('tasks.task.delete', { taskId })).body.result).toEqual({ task: true });
      expect(await call('tasks.task.get', { taskId })).toMatchObject({
        status: 400,
        body: { error: 'ERROR_CORE' },
      });
      expect(await call('tasks.task.add', { fields: { DESCRIPTION: 'no title' } })).toMatchObject({
        status: 400,
        body: { error: 'ERROR_CORE' },
      });
    });

    it('keeps XML_ID and UF_CRM_TASK, filters by them, and completes a task once (STATUS 5)', async () => {
      const fields = { TITLE: 'Missed call', RESPONSIBLE_ID: 3, XML_ID: 'marker-1', UF_CRM_TASK: ['C_2'] };
      const taskId = (await call('tasks.task.add', { fields })).body.result.task.id;
      await call('tasks.task.add', { fields: { ...fields, XML_ID: 'marker-2', UF_CRM_TASK: ['L_1'] } });
      const listed = await call('tasks.task.list', {
        filter: { XML_ID: 'marker-1', RESPONSIBLE_ID: 3, '>=CREATED_DATE': '2020-01-01T00:00:00+00:00' },
        select: ['ID', 'XML_ID'],
      });
      expect(listed.body.result.tasks).toEqual([{ id: taskId, xmlId: 'marker-1' }]);
      expect(
        (await call('tasks.task.list', { filter: { UF_CRM_TASK: 'L_1' } })).body.result.tasks,
      ).toHaveLength(1);
      expect((await call('tasks.task.complete', { taskId })).body.result.task).toMatchObject({
        status: '5',
        closedDate: expect.any(String),
        ufCrmTask: ['C_2'],
      });
      expect(await call('tasks.task.complete', { taskId })).toMatchObject({
        status: 400,
        body: { error: 'ERROR_CORE' },
      });
      expect(await call('tasks.task.add', { fields: { TITLE: 'x', UF_CRM_TASK: ['X_1'] } })).toMatchObject({
        status: 400,
        body: { error: 'ERROR_CORE' },
      });
      const inspected = await request(`${portal.url}/_sandbox/tasks?xmlId=marker-1`);
      expect(inspected.body).toEqual([expect.objectContaining({ id: taskId, status: '5' })]);
    });

    it('loses the answer of a request that called a chosen method, after running it', async () => {
      const fault = { kind: 'lose-answer', method: 'tasks.task.add', times: 1 };
      expect((await request(`${portal.url}/_sandbox/faults`, { json: fault })).status).toBeLessThan(300);
      const lost = await call('batch', {
        halt: 0,
        cmd: { add: `tasks.task.add?${query({ fields: { TITLE: 'Lost', XML_ID: 'lost-1' } })}` },
      }).catch((error: unknown) => error);
      // No answer at all: the connection is dropped (fetch's own error, from another realm than jest's).
      expect((lost as Error).message).toMatch(/fetch failed/);
      const inspected = await request(`${portal.url}/_sandbox/tasks?xmlId=lost-1`);
      expect(inspected.body).toHaveLength(1);
      expect((await call('tasks.task.add', { fields: { TITLE: 'Kept' } })).status).toBe(200);
    });
  });
});
