import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const pbx = readFileSync(resolve(__dirname, '../../docs/PBX.md'), 'utf8');
const between = (start: string, end: string) =>
  pbx.slice(pbx.indexOf(start), pbx.indexOf(end, pbx.indexOf(start)));
const classes = (text: string) => [...text.matchAll(/`([a-z]+)`/g)].map((match) => match[1]).sort();

/** docs/PBX.md's checklists for an office's IT say what its configuration examples say. */
describe('docs/PBX.md', () => {
  const freepbx = between('### FreePBX 17, step by step', '### Follow over AMI');
  const example = between('### Follow over AMI', '### Or post finished calls');

  it('ticks in the FreePBX GUI exactly the read and write rights of the manager.conf example', () => {
    const read = /Rights, \*\*Read\*\*: tick ([^;]+);/.exec(freepbx)![1];
    const ini = /^\s*read = ([\w,]+)/m.exec(example)![1].split(',').sort();
    expect(classes(read)).toEqual(ini);
    const write = /Rights, \*\*Write\*\*: tick `(\w+)` only/.exec(freepbx)![1];
    expect(/^\s*write = (\w+)/m.exec(example)![1]).toBe(write);
    expect(freepbx).toMatch(/click-to-call \(`DIAL_MODE=ami`\) tick `originate`/);
  });

  it('says up front that internal numbers must be the extensions, and how to find the default employee', () => {
    const first = freepbx.indexOf('1. **The manager user.**');
    expect(freepbx.indexOf('internal number in the portal must be their FreePBX extension')).toBeLessThan(
      first,
    );
    expect(freepbx).toContain('/company/personal/user/<id>/');
    expect(freepbx).toContain('B24_DEFAULT_USER_ID=<id>');
    expect(freepbx).toContain('Apply Config');
    expect(freepbx).toMatch(/Firewall → Networks[^\n]*\n[^\n]*\*\*Trusted\*\*/);
  });

  it('has FreeSWITCH admit only the bridge: a password and an inbound ACL naming its list', () => {
    const freeswitch = between('### FreeSWITCH, step by step', '### Follow over the event socket');
    const list = /<list name="([\w-]+)" default="deny">/.exec(freeswitch)![1];
    expect(freeswitch).toContain(`<param name="apply-inbound-acl" value="${list}"/>`);
    expect(freeswitch).toMatch(/<param name="password" value="[^"]+"\/>/);
    expect(freeswitch).not.toMatch(/value="ClueCon"/);
  });

  it('links nothing outside the project', () => {
    expect(pbx).not.toMatch(/\]\(https?:/);
  });
});
