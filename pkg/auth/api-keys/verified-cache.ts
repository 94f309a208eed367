/**
 * Successful (and failed) verifications by fast hash of the presented key pair. An entry remembers
 * the bcrypt hash it was checked against: it only counts while the Secret still holds that hash, so
 * a rotated or recreated key can never be served from a stale entry. Activity and expiry are
 * checked on the Secret itself on every request, which is what makes revocation immediate.
 * Insertion-ordered Map as a bounded FIFO: cheap, and the bound caps memory under key spraying.
 */
export class VerificationCache {
  private readonly entries = new Map<string, string>();
  private readonly max: number;

  constructor(max: number) {
    this.max = max;
  }

  matches(fast: string, secretHash: string): boolean {
    return this.entries.get(fast) === secretHash;
  }

  remember(fast: string, secretHash: string): void {
    this.entries.delete(fast);
    this.entries.set(fast, secretHash);
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  forget(fast: string): void {
    this.entries.delete(fast);
  }

  get size(): number {
    return this.entries.size;
  }
}
