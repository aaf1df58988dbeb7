// Test data shared by the web client's unit tests.

/** A message of `general` > `deploy` from user 2, as the server sends it; `over` changes fields. */
export const msg = (id: number, over: Record<string, unknown> = {}) => ({
  id,
  type: 'stream',
  stream_id: 5,
  subject: 'deploy',
  sender_id: 2,
  sender_email: 'bo@x',
  sender_full_name: 'Bo',
  display_recipient: 'general',
  content: `<p>m${id}</p>`,
  timestamp: 1,
  reactions: [],
  ...over,
});
