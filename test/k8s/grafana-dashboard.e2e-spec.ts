import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import axios from 'axios';
import { SandboxPortal } from '../../sandbox';
import { BridgeMetrics } from '../../src/metrics/bridge-metrics';
import {
  installApp,
  OAuthBridge,
  postCalls,
  startOAuthBridge,
  tempDir,
  untilAllFinished,
} from '../auth/oauth-harness';
import { callBodies, eventually, PBX_TOKEN, started } from '../support/bridge-harness';
import { injectFault } from '../support/sandbox-inspect';
import { untilAccessTokenExpired } from '../support/wait';

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string }[];
}

const dashboard = JSON.parse(
  readFileSync(resolve(__dirname, '../../k8s/grafana-dashboard.json'), 'utf8'),
) as {
  uid: string;
  templating: { list: { name: string }[] };
  panels: Panel[];
};
const queried = dashboard.panels.filter((panel) => panel.type !== 'row');
const expressions = queried.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
const referenced = new Set(expressions.flatMap((expr) => expr.match(/\b(bridge|process|nodejs)_\w+/g) ?? []));

/** Every series name the bridge exports: its own metrics and Node's defaults, histograms by their parts. */
async function exportedSeries(): Promise<{ own: string[]; all: Set<string> }> {
  const metrics = await new BridgeMetrics().registry.getMetricsAsJSON();
  const all = new Set(
    metrics.flatMap(({ name, type }) =>
      String(type) === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
    ),
  );
  return { own: metrics.map(({ name }) => name).filter((name) => name.startsWith('bridge_')), all };
}

/** The series names that have at least one sample in a /metrics page (comments and blank lines aside). */
function sampledSeries(page: string): Set<string> {
  return new Set(page.split('\n').flatMap((line) => line.match(/^[a-zA-Z_:][\w:]*(?=[{ ])/) ?? []));
}

/**
 * A short run that gives every plotted series a sample: OAuth mode with 2 s access tokens (a refresh),
 * a portal error once (a retry), calls posted one by one (batches, budget), lookups, a click dialled over
 * HTTP (portal events, dials), transcripts on (their series start at zero), and the gauges filled by the
 * scrape itself.
 */
async function shortRun(sandbox: SandboxPortal, bridge: OAuthBridge, dialled: string[]): Promise<string> {
  expect((await installApp(sandbox, bridge)).status).toBe(200);
  // Outlives the first access token, so delivery starts with a refresh.
  await untilAccessTokenExpired(bridge.storedTokens);
  await injectFault(sandbox, { kind: 'http', status: 500, error: 'INTERNAL_SERVER_ERROR', times: 1 });
  for (const body of callBodies('dash', 6)) await postCalls(bridge, body);
  // One call that rings before it ends, so its card pops (bridge_ring_to_card_seconds).
  await postCalls(bridge, [started('ringing-dash')]);
  for (const phone of ['+49 151 2000000', '+49 151 9999999', '+49 151 2000000']) {
    const lookup = await bridge.http
      .get('/v1/lookup')
      .query({ phone })
      .set('Authorization', `Bearer ${PBX_TOKEN}`);
    expect(lookup.status).toBe(200);
  }
  // A click in the CRM once the bridge's handlers are bound: an event post, and a dial over HTTP.
  await eventually(async () => {
    const { data } = await axios.get<{ bindings: unknown[] }>(`${sandbox.url}/_sandbox/events`);
    return data.bindings.length > 0 ? true : undefined;
  });
  const click = await axios.post(`${sandbox.url}/_sandbox/click`, { phone: '+49 151 3000000', userId: 2 });
  expect(click.status).toBe(200);
  await untilAllFinished(sandbox, 'dash', 6);
  await eventually(async () => (dialled.length > 0 ? true : undefined));
  await eventually(async () =>
    sandbox.calls({ EXTERNAL_CALL_ID: 'ringing-dash' }).length ? true : undefined,
  );
  const metrics = await bridge.http.get('/metrics');
  expect(metrics.status).toBe(200);
  return metrics.text;
}

describe('k8s/grafana-dashboard.json', () => {
  it('queries only series the bridge exports', async () => {
    const { all } = await exportedSeries();
    expect([...referenced].filter((name) => !all.has(name))).toEqual([]);
  });

  it('shows every metric of the bridge', async () => {
    const { own } = await exportedSeries();
    const shown = [...referenced].map((name) => name.replace(/_(bucket|sum|count)$/, ''));
    expect(own.filter((name) => !shown.includes(name))).toEqual([]);
  });

  it('draws the delivery rate against the budget ceiling of 2 requests/s × 50 commands', () => {
    const panel = queried.find(
      (candidate) => /budget/i.test(candidate.title) && /delivery/i.test(candidate.title),
    )!;
    expect(panel.targets!.map((target) => target.expr)).toEqual([
      expect.stringContaining('bridge_commands_total'),
      'vector(100)',
    ]);
  });

  it('uses the data source, job and portal variables it declares, with unique panel ids', () => {
    const variables = dashboard.templating.list.map((variable) => variable.name);
    expect(variables).toEqual(['datasource', 'job', 'portal']);
    for (const panel of queried) {
      expect([panel.title, panel.datasource?.uid]).toEqual([panel.title, '${datasource}']);
    }
    const used = new Set(expressions.flatMap((expr) => expr.match(/\$(\w+)/g) ?? []));
    expect([...used].filter((name) => !['$job', '$portal', '$__rate_interval'].includes(name))).toEqual([]);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  describe('after a short run against the sandbox portal', () => {
    const workspace = tempDir();
    let sandbox: SandboxPortal;
    let bridge: OAuthBridge;
    // The PBX's dial URL (DIAL_MODE=http): records what it was asked to dial.
    const dialled: string[] = [];
    let pbx: Server;
    beforeAll(async () => {
      pbx = createServer((req, res) => {
        dialled.push(req.url ?? '');
        res.writeHead(200).end();
      });
      await new Promise<void>((resolve) => pbx.listen(0, '127.0.0.1', resolve));
      const { port } = pbx.address() as AddressInfo;
      sandbox = await SandboxPortal.start({ accessTokenTtlSec: 2 });
      bridge = await startOAuthBridge(sandbox, workspace.dir, {
        DIAL_MODE: 'http',
        DIAL_METHOD: 'GET',
        DIAL_URL: `http://127.0.0.1:${port}/dial?from={extension}&to={number}`,
        // Transcripts on (no call here has a recording the bridge holds): their series are exported.
        TRANSCRIBE_URL: `http://127.0.0.1:${port}/v1/audio/transcriptions`,
      });
    });
    afterAll(async () => {
      pbx?.close();
      await bridge?.close();
      await sandbox?.close();
      workspace.remove();
    });

    it('has a sample for every series a panel plots', async () => {
      const sampled = sampledSeries(await shortRun(sandbox, bridge, dialled));
      expect([...referenced].filter((name) => !sampled.has(name))).toEqual([]);
    });
  });
});
