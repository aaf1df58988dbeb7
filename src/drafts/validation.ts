import { z } from 'zod';

/** A draft as clients send it (reference schema "Draft"; `id` is the server's). */
export const DRAFT = z
  .object({
    type: z.enum(['', 'stream', 'private']),
    to: z.array(z.int()),
    topic: z.string(),
    content: z.string().trim().min(1),
    timestamp: z.number().nullable().optional(),
  })
  .strict();

export type DraftInput = z.infer<typeof DRAFT>;
