import { escapeHtml } from '../../shared/calendar/html';

/**
 * A template compiled once (the MJML layout's HTML) and filled for each message by
 * string substitution only. In the source, `{{name}}` is a slot and
 * `<!--{{#name}}-->…<!--{{/name}}-->` a block kept only when its value is true.
 *
 * Filling is in two steps, so the part that all recipients of a job share is done once:
 * `bind` fills every name but those left for later (the per-recipient links), merging
 * the text between them; `render` fills the rest, which is a handful of concatenations.
 */
type Node = string | { slot: string } | { block: string; body: Node[] };
export type Template = readonly Node[];

/** A value already in HTML (built from escaped parts); any plain string is escaped. */
interface Html {
  html: string;
}
export const asHtml = (html: string): Html => ({ html });
export type Values = Readonly<Record<string, string | Html | boolean | undefined>>;

// A block's marker is an HTML comment, so it survives the MJML compiler and a browser
// would ignore any left over; a slot is bare, so it can stand in an attribute.
const TOKEN = /<!--\{\{([#/])(\w+)\}\}-->|\{\{(\w+)\}\}/g;

export function parseTemplate(source: string): Template {
  const root: Node[] = [];
  const open: Array<{ name: string; body: Node[] }> = [];
  let body = root;
  let at = 0;
  for (const m of source.matchAll(TOKEN)) {
    if (m.index > at) body.push(source.slice(at, m.index));
    at = m.index + m[0].length;
    const [, mark, blockName, slotName] = m;
    if (slotName) {
      body.push({ slot: slotName });
    } else if (mark === '#') {
      const block = { block: blockName, body: [] as Node[] };
      body.push(block);
      open.push({ name: blockName, body });
      body = block.body;
    } else {
      const parent = open.pop();
      if (parent?.name !== blockName) throw new Error(`template: {{/${blockName}}} closes ${parent ? `{{#${parent.name}}}` : 'nothing'}`);
      body = parent.body;
    }
  }
  if (open.length) throw new Error(`template: {{#${open[open.length - 1].name}}} is never closed`);
  if (at < source.length) body.push(source.slice(at));
  return root;
}

/** Every slot and block name the template uses. */
export function templateNames(t: Template, into = new Set<string>()): Set<string> {
  for (const n of t) {
    if (typeof n === 'string') continue;
    if ('slot' in n) into.add(n.slot);
    else templateNames(n.body, into.add(n.block));
  }
  return into;
}

/** Fills every name but those in `later`, which stay slots and blocks (their insides filled). */
export function bind(t: Template, values: Values, later: ReadonlySet<string> = new Set()): Template {
  const out: Node[] = [];
  const push = (n: Node) => {
    const last = out.length - 1;
    if (typeof n === 'string' && typeof out[last] === 'string') out[last] += n;
    else out.push(n);
  };
  for (const n of t) {
    if (typeof n === 'string') {
      push(n);
    } else if ('slot' in n) {
      if (later.has(n.slot)) {
        push(n);
        continue;
      }
      const v = values[n.slot];
      if (typeof v !== 'string' && (typeof v !== 'object' || v === null)) throw new Error(`template: no value for {{${n.slot}}}`);
      push(typeof v === 'string' ? escapeHtml(v) : v.html);
    } else if (later.has(n.block)) {
      push({ block: n.block, body: bind(n.body, values, later) as Node[] });
    } else if (values[n.block]) {
      for (const inner of bind(n.body, values, later)) push(inner);
    }
  }
  return out;
}

/** The template with `f` applied to its text (not to values filled later). */
export function mapText(t: Template, f: (text: string) => string): Template {
  return t.map((n) => (typeof n === 'string' ? f(n) : 'slot' in n ? n : { block: n.block, body: mapText(n.body, f) as Node[] }));
}

/** The template filled whole. */
export function render(t: Template, values: Values): string {
  const filled = bind(t, values);
  return filled.length === 1 ? (filled[0] as string) : filled.join('');
}
