import type { ObjectLike } from './types.ts';

/** Equality selectors only (`a=b,c!=d,e`): what the platform's own code uses. */
export function matchesLabels(o: ObjectLike, selector: string | undefined): boolean {
  if (!selector) return true;
  const labels = o.metadata?.labels ?? {};
  return selector.split(',').every((term) => {
    const [k = '', v] = term.split(/!?=/);
    if (v === undefined) return k.trim() in labels;
    return term.includes('!=') ? labels[k.trim()] !== v.trim() : labels[k.trim()] === v.trim();
  });
}
