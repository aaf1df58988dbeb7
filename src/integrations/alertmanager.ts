// Prometheus Alertmanager: one message per instance and status, listing its alerts.
import type { Integration } from './index.ts';
import { jsonBody, list, maybe, str, type Json } from './payload.ts';
import { badRequest } from '../http/errors.ts';

function labelOrAnnotation(alert: Json, field: string): string | undefined {
  const value = maybe(maybe(alert, 'labels'), field) ?? maybe(maybe(alert, 'annotations'), field);
  return typeof value === 'string' ? value : undefined;
}

export const alertmanager: Integration = {
  name: 'alertmanager',
  displayName: 'Alertmanager',
  allEventTypes: null,
  handle(req) {
    const payload = jsonBody(req);
    // Which label names the topic, and which describes the alert.
    const nameField = req.param('name') ?? 'instance';
    const descField = req.param('desc') ?? 'alertname';
    const topics = new Map<string, { firing: string[]; resolved: string[] }>();
    for (const [i, alert] of list(payload, 'alerts').entries()) {
      const name = labelOrAnnotation(alert, nameField) ?? '(unknown)';
      const desc = labelOrAnnotation(alert, descField) ?? `<missing field: ${descField}>`;
      const url = maybe(alert, 'generatorURL');
      const body = typeof url === 'string' && url !== '' ? `${desc} ([source](${url.replace('tab=1', 'tab=0')}))` : desc;
      const status = str(payload, 'alerts', i, 'status');
      if (status !== 'firing' && status !== 'resolved') throw badRequest(`Malformed payload: unknown alert status '${status}'`);
      const entry = topics.get(name) ?? { firing: [], resolved: [] };
      entry[status].push(body);
      topics.set(name, entry);
    }
    const messages = [];
    for (const [topic, statuses] of topics) {
      for (const [status, bodies] of Object.entries(statuses)) {
        if (bodies.length === 0) continue;
        const head = status === 'firing' ? ':alert: **FIRING**' : ':squared_ok: **Resolved**';
        const content = bodies.length === 1 ? `${head} ${bodies[0]}` : `${head}\n${bodies.map((b) => `* ${b}`).join('\n')}`;
        messages.push({ topic, content });
      }
    }
    return messages;
  },
};
