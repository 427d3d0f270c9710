/**
 * The three selector languages volume placement uses: label selectors (a claim choosing
 * PVs), node selector terms (a PV's or pod's node affinity) and topology selector terms
 * (a StorageClass's allowedTopologies). Semantics follow apimachinery and
 * component-helpers: an unknown operator matches nothing rather than everything, so a typo
 * never widens where a volume may go.
 */

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** Expressions (on labels) and fields (only `metadata.name`) are ANDed. */
export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface TopologySelectorTerm {
  matchLabelExpressions?: Array<{ key: string; values?: string[] }>;
}

/** An empty selector (`{}`) matches every object, as in `metav1.LabelSelectorAsSelector`. */
export function matchesLabelSelector(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((r) => matchesRequirement(r, labels[r.key]));
}

/**
 * Terms are ORed, the requirements inside a term ANDed. No terms, or a term with no
 * requirements, matches no node (`nodeaffinity.NodeSelector`).
 */
export function matchesNodeSelectorTerms(
  terms: readonly NodeSelectorTerm[],
  node: { name: string; labels: Record<string, string> },
): boolean {
  return terms.some((term) => {
    const expressions = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (expressions.length === 0 && fields.length === 0) return false;
    return (
      expressions.every((r) => matchesRequirement(r, node.labels[r.key])) &&
      fields.every((r) => r.key === 'metadata.name' && ['In', 'NotIn'].includes(r.operator) && matchesRequirement(r, node.name))
    );
  });
}

/**
 * A class without allowedTopologies may provision anywhere; otherwise some term must have
 * every one of its keys on the node with one of the listed values.
 */
export function matchesAllowedTopologies(
  terms: readonly TopologySelectorTerm[] | undefined,
  labels: Record<string, string>,
): boolean {
  if (!terms || terms.length === 0) return true;
  return terms.some((term) =>
    (term.matchLabelExpressions ?? []).every((e) => {
      const value = labels[e.key];
      return value !== undefined && (e.values ?? []).includes(value);
    }),
  );
}

function matchesRequirement(requirement: { operator: string; values?: string[] }, value: string | undefined): boolean {
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const have = Number.parseInt(value ?? '', 10);
      const want = Number.parseInt(values[0] ?? '', 10);
      if (Number.isNaN(have) || Number.isNaN(want) || values.length !== 1) return false;
      return requirement.operator === 'Gt' ? have > want : have < want;
    }
    default:
      return false;
  }
}
