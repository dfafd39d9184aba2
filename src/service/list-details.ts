/**
 * What a kind's detail read showed of its records that its list may leave out, kept per
 * account by id (the list's `KindListState.details`, shared by every piece of work on the
 * account): fields that never change (a task's env), so that a walk of a list without
 * them, or a poll answered from the list, fills them in instead of reading the record in
 * detail again. An entry goes when a complete walk of the whole list that started after
 * it was kept no longer shows the record (`KindList.iterate`: the routine list snapshot's
 * walk, at least once per poll interval while one object of the kind is settled, and the
 * token walks), and when the operator deletes the record. Nothing is kept until the list
 * shows a record without the fields: a list that carries them needs none.
 */
export class ListDetails<R> {
  private readonly kept = new Map<string, { fields: Partial<R>; seq: number }>();
  /** Bumped by every `keep`: a walk prunes only the entries kept before it started. */
  private seq = 0;
  /** Whether the list showed a record without the fields. */
  private wanted = false;

  /** Notes that the list showed a record without the fields: detail reads are kept from now on. */
  lacking(): void {
    this.wanted = true;
  }

  /** Keeps `fields` of record `id` as its detail read showed them (once the list lacks them). */
  keep(id: string, fields: Partial<R>): void {
    if (!this.wanted) return;
    this.seq++;
    this.kept.set(id, { fields, seq: this.seq });
  }

  /** What the detail read of record `id` showed, or undefined when none is kept. */
  get(id: string): Partial<R> | undefined {
    return this.kept.get(id)?.fields;
  }

  /** Forgets record `id` (deleted). */
  forget(id: string): void {
    this.kept.delete(id);
  }

  /** The ids of the records kept. */
  ids(): string[] {
    return [...this.kept.keys()];
  }

  /**
   * The mark of a walk of the whole list starting now, for {@link prune}; undefined when
   * nothing is kept (the walk has nothing to prune).
   */
  mark(): number | undefined {
    return this.kept.size > 0 ? this.seq : undefined;
  }

  /**
   * Forgets the records kept before `mark` that a complete walk of the whole list, started
   * at `mark`, did not show (`listed`: the ids it showed).
   */
  prune(mark: number, listed: ReadonlySet<string>): void {
    for (const [id, entry] of this.kept) {
      if (entry.seq <= mark && !listed.has(id)) this.kept.delete(id);
    }
  }
}
