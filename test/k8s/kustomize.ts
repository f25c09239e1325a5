import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { loadAll } from 'js-yaml';
import type { KubeObject } from './kubernetes-schema';

const k8sDir = resolve(__dirname, '../../k8s');

/**
 * The objects `kubectl kustomize` renders for a folder of k8s/, as an operator's `kubectl apply -k` would
 * send them. Needs kubectl 1.27 or later (kustomize v5: `labels` with `includeTemplates`); no cluster.
 */
export function renderKustomization(folder: string): KubeObject[] {
  let output: string;
  try {
    output = execFileSync('kubectl', ['kustomize', resolve(k8sDir, folder)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(
      `kubectl kustomize k8s/${folder} failed (kubectl 1.27+ must be on PATH): ${stderr || message}`,
    );
  }
  return loadAll(output)
    .filter((document): document is KubeObject => document !== null)
    .map(unfoldSecretData);
}

/**
 * kustomize folds long base64 values over several lines. The API server's decoder skips the line breaks;
 * the schema's "byte" format does not, so they are taken out before validation.
 */
function unfoldSecretData(object: KubeObject): KubeObject {
  const { data } = object as KubeObject & { data?: Record<string, string> };
  if (object.kind !== 'Secret' || !data) return object;
  const unfolded = Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, value.replace(/\s/g, '')]),
  );
  return { ...object, data: unfolded } as KubeObject;
}
