import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

interface Validatable {
  validate(): void;
  toJSON(): unknown;
}

/** The kinds the manifests may contain; anything else fails, since it could not be checked. */
const models: Record<string, new (data: never) => Validatable> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

/**
 * Everything wrong with an object by the Kubernetes OpenAPI schema: types, enums, required fields, and
 * unknown fields, which kubernetes-models' validate() lets through (its schemas allow additional
 * properties) while an API server with strict field validation rejects or silently drops them.
 */
export function schemaProblems(object: KubeObject): string[] {
  const Model = models[`${object.apiVersion}/${object.kind}`];
  if (!Model) return [`no schema known for ${object.apiVersion} ${object.kind}`];
  const model = new Model(object as never);
  const reads = new Map<object, { path: string; keys: Set<string> }>();
  const problems: string[] = [];
  try {
    model.validate.call(watchReads(model.toJSON(), '', reads));
  } catch (error) {
    problems.push((error as Error).message);
  }
  return problems.concat(unreadFields(reads).map((path) => `data${path} is not a field of the schema`));
}

/**
 * The generated validators read exactly the properties their schema names (and every key of a map), so a
 * field the validator never read is one the schema does not know.
 */
function watchReads<T>(value: T, path: string, reads: Map<object, { path: string; keys: Set<string> }>): T {
  if (value === null || typeof value !== 'object') return value;
  const entry = reads.get(value) ?? { path, keys: new Set<string>() };
  reads.set(value, entry);
  return new Proxy(value, {
    get(target, key, receiver) {
      const child: unknown = Reflect.get(target, key, receiver);
      if (typeof key !== 'string' || !Object.hasOwn(target, key)) return child;
      entry.keys.add(key);
      return watchReads(child, `${path}/${key}`, reads);
    },
  });
}

function unreadFields(reads: Map<object, { path: string; keys: Set<string> }>): string[] {
  return [...reads.entries()]
    .filter(([value]) => !Array.isArray(value))
    .flatMap(([value, { path, keys }]) =>
      Object.keys(value)
        .filter((key) => !keys.has(key))
        .map((key) => `${path}/${key}`),
    );
}
