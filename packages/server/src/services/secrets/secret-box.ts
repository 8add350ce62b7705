import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** A secret as the records hold it: AES-256-GCM ciphertext, and which key sealed it. */
export interface SealedSecret {
  alg: 'A256GCM';
  /** Key id: a hash of the derived key, so the right key is picked and a wrong one is named. */
  kid: string;
  iv: string;
  tag: string;
  ct: string;
}

interface Key {
  id: string;
  bytes: Buffer;
}

/** Any string from the environment becomes a 256-bit key (HKDF-SHA-256, fixed salt and context). */
const derive = (material: string): Key => {
  const bytes = Buffer.from(hkdfSync('sha256', material, 'cairn', 'connector signing secrets v1', 32));
  return { id: createHash('sha256').update(bytes).digest('hex').slice(0, 16), bytes };
};

export const isSealed = (value: unknown): value is SealedSecret =>
  typeof value === 'object' && value !== null && (value as SealedSecret).alg === 'A256GCM' && typeof (value as SealedSecret).ct === 'string';

/**
 * Encrypts connector signing secrets at rest with CAIRN_SECRET_KEY. During a rotation the
 * previous key (CAIRN_SECRET_KEY_PREVIOUS) still opens what it sealed; everything sealed
 * anew uses the current key.
 */
export class SecretBox {
  private readonly current: Key;
  private readonly previous: Key | null;

  constructor(current: string, previous?: string) {
    this.current = derive(current);
    this.previous = previous ? derive(previous) : null;
  }

  get keyId(): string {
    return this.current.id;
  }

  /** Whether this box has the key `kid` names (current or previous). */
  knows(kid: string): boolean {
    return kid === this.current.id || kid === this.previous?.id;
  }

  seal(plain: string): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.bytes, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return { alg: 'A256GCM', kid: this.current.id, iv: iv.toString('base64url'), tag: cipher.getAuthTag().toString('base64url'), ct: ct.toString('base64url') };
  }

  /** The plain secret, or null when no key of this box sealed it (or it was tampered with). */
  open(sealed: SealedSecret): string | null {
    const key = sealed.kid === this.current.id ? this.current : sealed.kid === this.previous?.id ? this.previous : null;
    if (!key) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(sealed.iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }

  /** Sealed with the previous key: to seal again with the current one. */
  isStale(sealed: SealedSecret): boolean {
    return sealed.kid !== this.current.id;
  }
}
