import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BridgeMetrics } from '../../src/metrics/bridge-metrics';

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
    for (const panel of queried)
      expect([panel.title, panel.datasource?.uid]).toEqual([panel.title, '${datasource}']);
    const used = new Set(expressions.flatMap((expr) => expr.match(/\$(\w+)/g) ?? []));
    expect([...used].filter((name) => !['$job', '$portal', '$__rate_interval'].includes(name))).toEqual([]);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
