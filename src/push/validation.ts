import { z } from 'zod';

/** RFC 4648 standard base64, padded (what the reference asks of keys and ciphertexts). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const MAX_KEY_LENGTH = 1000;
export const MAX_REGISTRATION_LENGTH = 10000;

export function base64(max: number): z.ZodType<string> {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((v) => BASE64.test(v), { message: 'Invalid {name}' });
}
