import { lineErrorsOf, linesWith, ruleOf } from './lines-view';
import { answersOfStored, settingsOfAnswers } from './setup-answers';

describe('the guided setup: answers as settings', () => {
  it('makes FreePBX answers SPEC settings: AMI_URL with the user and password encoded, the CDR beside it', () => {
    const outcome = settingsOfAnswers(
      'freepbx',
      {
        host: 'pbx.example.com',
        port: '',
        user: 'crm-bridge',
        password: 'p@ss/word',
        cdrUser: 'cdr',
        cdrPassword: 'c:d',
        clickToCall: 'yes',
      },
      undefined,
    );
    expect(outcome).toEqual({
      patch: {
        follow: {
          PBX_EVENTS: 'ami',
          AMI_URL: 'tcp://crm-bridge:p%40ss%2Fword@pbx.example.com:5038',
          ASTERISK_CDR_URL: 'mysql://cdr:c%3Ad@pbx.example.com:3306/asteriskcdrdb',
        },
        dial: { DIAL_MODE: 'ami', AMI_URL: 'tcp://crm-bridge:p%40ss%2Fword@pbx.example.com:5038' },
      },
    });
  });

  it('encrypted FreeSWITCH: tls:// on the port given; click-to-call "no" clears the dial settings', () => {
    expect(
      settingsOfAnswers(
        'freeswitch',
        { host: '10.0.0.5', port: '8022', tls: 'yes', password: 's', clickToCall: 'no' },
        undefined,
      ),
    ).toEqual({ patch: { follow: { PBX_EVENTS: 'esl', ESL_URL: 'tls://:s@10.0.0.5:8022' }, dial: null } });
  });

  it('keeps the stored password when the field is left empty, and the stored trunks', () => {
    const stored = {
      PBX_EVENTS: 'ami',
      AMI_URL: 'tcp://crm:old%20secret@pbx:5038',
      PBX_TRUNKS: 'PJSIP/trunk*',
    };
    expect(settingsOfAnswers('freepbx', { host: 'pbx', user: 'crm', password: '' }, stored)).toEqual({
      patch: {
        follow: { PBX_EVENTS: 'ami', AMI_URL: 'tcp://crm:old%20secret@pbx:5038', PBX_TRUNKS: 'PJSIP/trunk*' },
      },
    });
    expect(answersOfStored(stored)).toEqual({
      host: 'pbx',
      port: '5038',
      user: 'crm',
      tls: '',
      cdrUser: '',
      cdrName: '',
    });
  });

  it('names every bad answer by its field', () => {
    expect(
      settingsOfAnswers(
        'freepbx',
        { host: 'not a host', port: '70000', user: 'a b', password: '', clickToCall: 'maybe' },
        undefined,
      ),
    ).toEqual({
      errors: {
        host: ['host: a host name or an IP address, e.g. pbx.example.com'],
        port: ['port: a whole number from 1 to 65535'],
        user: ['user: the manager user name, 1-64 letters, digits, ".", "_", "-", "@"'],
        password: ['password: required (the PBX refuses a login without one)'],
        clickToCall: ['clickToCall: yes or no'],
      },
    });
  });
});

describe('the lines form: a rule in the lines setting', () => {
  it('reads a posted rule, keeping a bad value as typed for the check to name', () => {
    expect(
      ruleOf('+4930111', {
        name: ' Main ',
        crmCreate: 'no',
        crmSource: '',
        defaultUserId: '7',
        report: 'yes',
        missedCallTask: '',
      }),
    ).toEqual({ number: '+4930111', name: 'Main', crmCreate: false, defaultUserId: 7, report: true });
    expect(ruleOf('+4930111', { defaultUserId: 'seven', report: 'sometimes' })).toEqual({
      number: '+4930111',
      defaultUserId: 'seven',
      report: 'sometimes',
    });
  });

  it("replaces the line's rule where it is (matched normalised), else adds it last", () => {
    const stored = [{ number: '+49 30 111' }, { number: 'trunk-2', name: 'Two' }];
    expect(linesWith(stored, { number: '+4930111', name: 'One' })).toEqual({
      lines: [
        { number: '+4930111', name: 'One' },
        { number: 'trunk-2', name: 'Two' },
      ],
      index: 0,
    });
    expect(linesWith(stored, { number: 'new' }).index).toBe(2);
  });

  it("puts the check's problems of that rule beside their fields, the rest above", () => {
    expect(
      lineErrorsOf(
        ['lines[1] (+4930111): crmSource must be a lead source id', 'lines[0] (x): name must be text'],
        1,
      ),
    ).toEqual({
      crmSource: ['lines[1] (+4930111): crmSource must be a lead source id'],
      line: ['lines[0] (x): name must be text'],
    });
  });
});
