/**
 * The forwarder's chart rendered by helm 4 (`helm template`), for the tests, the image's
 * limits and the local stack: what a cluster gets is what these read.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { kubeTools } from './kube-tools.js';

export const CHART_DIR = fileURLToPath(new URL('../../charts/volhook-forwarder/', import.meta.url));
/** The values of an install that gives only what is required (charts/volhook-forwarder/ci/). */
export const REQUIRED_VALUES = join(CHART_DIR, 'ci', 'required-values.yaml');
export const ALL_VALUES = join(CHART_DIR, 'ci', 'all-values.yaml');

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface RenderOptions {
  /** Values files, in order (helm's -f). */
  valuesFiles?: string[];
  /** Values given inline, written to a file after valuesFiles (helm's -f of a generated file). */
  values?: Record<string, unknown>;
  releaseName?: string;
  namespace?: string;
  /** `--api-versions` to declare (e.g. monitoring.coreos.com/v1). */
  apiVersions?: string[];
  /** The chart's directory; default charts/volhook-forwarder (a test renders a copy it changed). */
  chartDir?: string;
}

/** helm's arguments for `template`/`lint` of the chart with these values, and a cleanup of its temp file. */
function valuesArgs(options: RenderOptions): { args: string[]; done: () => void } {
  const args = (options.valuesFiles ?? [REQUIRED_VALUES]).flatMap((file) => ['-f', file]);
  if (!options.values) return { args, done: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'volhook-values-'));
  const file = join(dir, 'values.json');
  writeFileSync(file, JSON.stringify(options.values));
  return { args: [...args, '-f', file], done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `helm template` as text; throws with helm's message (stderr) when helm refuses. */
export function renderChartText(options: RenderOptions = {}): string {
  const { args, done } = valuesArgs(options);
  try {
    return execFileSync(
      kubeTools().helm,
      ['template', options.releaseName ?? 'volhook-forwarder', options.chartDir ?? CHART_DIR, '-n', options.namespace ?? 'volhook-system', ...args, ...(options.apiVersions ?? []).flatMap((v) => ['--api-versions', v])],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(stderr || (error as Error).message);
  } finally {
    done();
  }
}

export function renderChart(options: RenderOptions = {}): Manifest[] {
  return parseAllDocuments(renderChartText(options))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`helm template rendered invalid YAML: ${doc.errors[0]!.message}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((doc): doc is Manifest => doc !== null);
}

/** `helm lint` of the chart with these values: its output, and whether it passed. */
export function lintChart(options: RenderOptions = {}): { ok: boolean; output: string } {
  const { args, done } = valuesArgs(options);
  try {
    const output = execFileSync(kubeTools().helm, ['lint', CHART_DIR, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, output };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${stdout}${stderr}` };
  } finally {
    done();
  }
}

/** The one object of a kind (and name, if given) in a render; throws if there is not exactly one. */
export function only(manifests: Manifest[], kind: string, name?: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  if (found.length !== 1) throw new Error(`the chart rendered ${found.length} ${kind}${name ? ` ${name}` : ''}, not one`);
  return found[0]!;
}

interface Container {
  name: string;
  image: string;
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  ports?: { name: string; containerPort: number }[];
}

/** The forwarder container of the render's Deployment. */
export function forwarderContainer(manifests: Manifest[]): Container {
  const deployment = only(manifests, 'Deployment') as Manifest & { spec: { template: { spec: { containers: Container[] } } } };
  const container = deployment.spec.template.spec.containers.find((c) => c.name === 'forwarder');
  if (!container) throw new Error('the Deployment has no forwarder container');
  return container;
}

/**
 * The environment the forwarder container starts with: its ConfigMaps (envFrom) and then its
 * env, the downward API's metadata.namespace as the pod's namespace. Anything else from the
 * downward API or a Secret is refused: nothing here could say its value.
 */
export function containerEnv(manifests: Manifest[]): Record<string, string> {
  const container = forwarderContainer(manifests);
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (!source.configMapRef) throw new Error(`envFrom ${JSON.stringify(source)} is not a ConfigMap`);
    Object.assign(env, (only(manifests, 'ConfigMap', source.configMapRef.name) as Manifest & { data: Record<string, string> }).data);
  }
  const namespace = only(manifests, 'Deployment').metadata.namespace ?? 'default';
  for (const variable of container.env ?? []) {
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[variable.name] = namespace;
    else throw new Error(`env ${variable.name}: cannot tell the value of ${JSON.stringify(variable.valueFrom)}`);
  }
  return env;
}
