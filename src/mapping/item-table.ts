/**
 * The items of a primary body and their top-level members as offsets in two typed arrays and one
 * list of names, as the scan (json-scan.ts) finds them. A mapped response keeps them from its scan
 * to its splice, across its mapping calls: as objects (one per member, one array per item) they
 * were the bulk of what the young generation copied at every scavenge meanwhile, and were
 * promoted with it; typed arrays hold no pointers and their contents are never copied by a
 * scavenge (docs/performance.md "JSON shaping against the hand-written proxy").
 */

export type ValueKind = 'string' | 'number' | 'true' | 'false' | 'null' | 'object' | 'array';

/** One `"key": value` of an item, as offsets into the text (end offsets are exclusive). */
export interface MemberSpan {
  /** Offset of the key's opening quote. */
  readonly keyStart: number;
  /** The key, unescaped. */
  readonly name: string;
  readonly valueStart: number;
  readonly valueEnd: number;
  readonly kind: ValueKind;
}

/** One object item: `start` is its `{`, `end` is just after its `}`. */
export interface ObjectSpan {
  readonly start: number;
  readonly end: number;
  readonly members: readonly MemberSpan[];
}

/** `KINDS[code]`: the kind a member's code stands for (the codes `Scanner.kindAt` gives). */
const KINDS: readonly ValueKind[] = ['string', 'number', 'true', 'false', 'null', 'object', 'array'];

/** Int32 slots per member: key start, value start, value end, kind code, name index. */
const M = 5;
/** Int32 slots per item: start, end, index of its first member. */
const I = 3;

/**
 * Items `0 .. count - 1`; item i's members are `first(i) .. first(i + 1) - 1` (member indexes
 * run on across the items). Filled by the scan through `addItem`, `addMember` and `endItem`.
 */
export class ItemTable {
  count = 0;
  private members = 0;
  private memberSlots: Int32Array;
  private itemSlots: Int32Array;
  /** The members' names by name index: an item that writes its keys as the one before adds none. */
  private readonly names: string[] = [];

  /** `expected`: about how many members the text holds (the arrays grow past it). */
  constructor(expected: number) {
    const members = Math.max(16, Math.min(expected, 1 << 16));
    this.memberSlots = new Int32Array(members * M);
    this.itemSlots = new Int32Array((members >> 2) * I + I);
  }

  first(i: number): number {
    return i < this.count ? this.itemSlots[i * I + 2]! : this.members;
  }
  start(i: number): number {
    return this.itemSlots[i * I]!;
  }
  end(i: number): number {
    return this.itemSlots[i * I + 1]!;
  }
  name(m: number): string {
    return this.names[this.memberSlots[m * M + 4]!]!;
  }
  keyStart(m: number): number {
    return this.memberSlots[m * M]!;
  }
  valueStart(m: number): number {
    return this.memberSlots[m * M + 1]!;
  }
  valueEnd(m: number): number {
    return this.memberSlots[m * M + 2]!;
  }
  kind(m: number): ValueKind {
    return KINDS[this.memberSlots[m * M + 3]!]!;
  }

  /** Item i as objects (what the tests, a merged answer and a keyed batch answer read). */
  span(i: number): ObjectSpan {
    const members: MemberSpan[] = [];
    for (let m = this.first(i), last = this.first(i + 1); m < last; m++) {
      members.push({
        keyStart: this.keyStart(m),
        name: this.name(m),
        valueStart: this.valueStart(m),
        valueEnd: this.valueEnd(m),
        kind: this.kind(m),
      });
    }
    return { start: this.start(i), end: this.end(i), members };
  }

  /** Starts an item at `start` (its `{`). */
  addItem(start: number): void {
    let slots = this.itemSlots;
    const at = this.count * I;
    if (at + I > slots.length) slots = this.itemSlots = grown(slots);
    slots[at] = start;
    slots[at + 2] = this.members;
  }

  /**
   * Adds a member to the item begun last; `like` is a member whose name it shares (its name is
   * then not stored again), or -1 with the name in `name`.
   */
  addMember(keyStart: number, valueStart: number, valueEnd: number, kind: number, like: number, name: string): void {
    let slots = this.memberSlots;
    const at = this.members * M;
    if (at + M > slots.length) slots = this.memberSlots = grown(slots);
    slots[at] = keyStart;
    slots[at + 1] = valueStart;
    slots[at + 2] = valueEnd;
    slots[at + 3] = kind;
    slots[at + 4] = like >= 0 ? slots[like * M + 4]! : this.names.push(name) - 1;
    this.members++;
  }

  /** Ends the item begun last at `end` (just after its `}`). */
  endItem(end: number): void {
    this.itemSlots[this.count * I + 1] = end;
    this.count++;
  }
}

function grown(slots: Int32Array): Int32Array {
  const next = new Int32Array(slots.length * 2);
  next.set(slots);
  return next;
}
