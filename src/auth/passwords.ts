import { hash, verify } from '@node-rs/argon2';
import { randomBytes } from 'node:crypto';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
}

export function argon2Hasher(cost: { memoryCost: number; timeCost: number }): PasswordHasher {
  return {
    hash: (password) => hash(password, cost),
    verify: async (passwordHash, password) => {
      try {
        return await verify(passwordHash, password);
      } catch {
        return false;
      }
    },
  };
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random [A-Za-z0-9] text: API keys are 32 of these. */
export function randomToken(length: number): string {
  // 248 = 62 * 4: bytes above it are dropped so every character is equally likely.
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHANUMERIC[b % 62];
    }
  }
  return out;
}

export const newApiKey = (): string => randomToken(32);

/** A password for accounts created without one: printed once, never stored in clear. */
export const generatePassword = (): string => randomToken(20);
