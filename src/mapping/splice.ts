/**
 * Writes the enriched body by editing the primary text in place: the only bytes that change are
 * the tags set and the keys removed (docs/design-decisions.md "Response mapping"). Everything else, whitespace
 * included, is copied from the original text.
 */
import type { ItemTable, ObjectSpan } from './item-table.js';

/** What happens to one item. */
export interface ItemEdit {
  /** Tag name -> raw JSON text, in the order the tags are added. */
  readonly set: ReadonlyMap<string, string>;
  /** Member names removed (`removeKeyMapping`); a name that is also set is replaced instead. */
  readonly remove: ReadonlySet<string>;
}

/** One edit of the text: `[at, to)` is replaced by `text` (an insertion when `to === at`). */
interface Op {
  readonly at: number;
  readonly to: number;
  readonly text: string;
}

/**
 * Applies the edits to their items. An existing key named like a tag keeps its place and gets the
 * new value (as `item[tag] = value` would do); new tags are appended after the last kept member.
 */
export function spliceItems(text: string, items: ItemTable, edits: readonly (ItemEdit | undefined)[]): string {
  const parts: string[] = [];
  const ops: Op[] = [];
  const keys = new TagKeys();
  let cursor = 0;
  for (let i = 0; i < items.count; i++) {
    const edit = edits[i];
    if (edit === undefined || (edit.set.size === 0 && edit.remove.size === 0)) continue;
    const last = items.first(i + 1) - 1;
    // The common case, new tags and no key removed: the tags go in after the last member, with no
    // edit recorded in between.
    if (edit.remove.size === 0 && last >= items.first(i) && !setsAMember(items, i, edit)) {
      const end = items.valueEnd(last);
      parts.push(text.slice(cursor, end));
      for (const [tag, json] of edit.set) parts.push(keys.of(tag), json);
      cursor = end;
      continue;
    }
    itemOps(items.span(i), edit, ops);
    for (const op of ops) {
      parts.push(text.slice(cursor, op.at), op.text);
      cursor = op.to;
    }
    ops.length = 0;
  }
  if (parts.length === 0) return text;
  parts.push(text.slice(cursor));
  return parts.join('');
}

/** Whether the edit sets a tag item i already has as a member. */
function setsAMember(items: ItemTable, i: number, edit: ItemEdit): boolean {
  for (let m = items.first(i), last = items.first(i + 1); m < last; m++) if (edit.set.has(items.name(m))) return true;
  return false;
}

/** `,"tag":` for each tag, written once per response rather than once per item. */
class TagKeys {
  private tag: string | undefined;
  private key = '';

  of(tag: string): string {
    if (tag !== this.tag) {
      this.tag = tag;
      this.key = `,${JSON.stringify(tag)}:`;
    }
    return this.key;
  }
}

/** Pushes one item's edits, in text order, onto `ops`. */
function itemOps(item: ObjectSpan, edit: ItemEdit, ops: Op[]): void {
  const members = item.members;
  const n = members.length;
  const kept = members.map((m) => edit.set.has(m.name) || !edit.remove.has(m.name));
  let lastKept = -1;
  for (let i = n - 1; i >= 0; i--) {
    if (kept[i]) {
      lastKept = i;
      break;
    }
  }
  const present = new Set<string>();
  for (const m of members) if (edit.set.has(m.name)) present.add(m.name);
  let added = '';
  for (const [tag, json] of edit.set) {
    if (!present.has(tag)) added += `${added === '' ? '' : ','}${JSON.stringify(tag)}:${json}`;
  }

  if (lastKept < 0) {
    // Every member goes (or there were none): the new tags become the whole object.
    const at = n > 0 ? members[0]!.keyStart : item.start + 1;
    if (added !== '') ops.push({ at, to: at, text: added });
    if (n > 0) ops.push({ at: members[0]!.keyStart, to: members[n - 1]!.valueEnd, text: '' });
    return;
  }
  for (let i = 0; i <= lastKept; i++) {
    const m = members[i]!;
    if (!kept[i]) {
      // A member followed by a kept one: cut from its key to the next key (its comma goes too).
      ops.push({ at: m.keyStart, to: members[i + 1]!.keyStart, text: '' });
      continue;
    }
    const replacement = edit.set.get(m.name);
    if (replacement !== undefined) ops.push({ at: m.valueStart, to: m.valueEnd, text: replacement });
    if (i === lastKept && added !== '') ops.push({ at: m.valueEnd, to: m.valueEnd, text: `,${added}` });
  }
  // Members after the last kept one: cut from the end of the last kept value (the comma before them).
  if (lastKept < n - 1) ops.push({ at: members[lastKept]!.valueEnd, to: members[n - 1]!.valueEnd, text: '' });
}
