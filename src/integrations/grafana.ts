// Grafana: alerting (Grafana 8+, `alerts`) and legacy alert notifications.
import type { Integration } from './index.ts';
import { badRequest } from '../http/errors.ts';
import { jsonBody, list, maybe, num, obj, str, type Json, type JsonObject } from './payload.ts';

const LEGACY_STATES = ['no_data', 'paused', 'alerting', 'ok', 'pending', 'unknown'];

function keyValues(title: string, values: JsonObject): string {
  const lines = Object.entries(values).map(([k, v]) => `- ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}\n`);
  return `${title}:\n${lines.join('')}\n`;
}

function alerting(payload: JsonObject) {
  const status = str(payload, 'status');
  if (status !== 'firing' && status !== 'resolved') throw badRequest(`Malformed payload: unknown status '${status}'`);
  const alerts = list(payload, 'alerts');
  const topic = `[${status.toUpperCase()}:${alerts.length}]`;
  let body = `${status === 'firing' ? ':alert:' : ':checkbox:'} **${status.toUpperCase()}**\n\n`;
  const message = maybe(payload, 'message');
  if (typeof message === 'string' && message !== '') body += `${message}\n`;
  for (const [i, alert] of alerts.entries()) {
    body += `\n---\n**Alert ${i + 1}**`;
    const labels = obj(alert, 'labels');
    if (typeof labels.alertname === 'string' && labels.alertname !== '') body += `: ${labels.alertname}.`;
    body += `\n\nThis alert was fired at <time:${str(alert, 'startsAt')}>.\n`;
    const end = str(alert, 'endsAt');
    if (end !== '0001-01-01T00:00:00Z') body += `\nThis alert was resolved at <time:${end}>.\n\n`;
    if (Object.keys(labels).length > 0) body += keyValues('Labels', labels);
    const annotations = obj(alert, 'annotations');
    if (Object.keys(annotations).length > 0) body += keyValues('Annotations', annotations);
  }
  const truncated = maybe(payload, 'truncatedAlerts');
  if (truncated) body += `${num(payload, 'truncatedAlerts')} alert(s) truncated.\n`;
  return { topic, content: body };
}

function legacy(payload: JsonObject) {
  const state = str(payload, 'state');
  if (!LEGACY_STATES.includes(state)) throw badRequest(`Malformed payload: unknown state '${state}'`);
  const icon = state === 'alerting' ? ':alert:' : state === 'ok' ? ':squared_ok:' : ':info:';
  let matches = '';
  for (const match of (maybe(payload, 'evalMatches') as Json[] | undefined) ?? []) {
    const value = maybe(match, 'value');
    matches += `**${str(match, 'metric')}:** ${value === undefined ? 'None' : String(value)}\n`;
  }
  const message = maybe(payload, 'message');
  const text = typeof message === 'string' ? `${message}\n\n` : '';
  let body = `${icon} **${state.toUpperCase()}**\n\n[${str(payload, 'ruleName')}](${str(payload, 'ruleUrl')})\n\n${text}${matches}`;
  const image = maybe(payload, 'imageUrl');
  if (typeof image === 'string') body += `\n[Click to view visualization](${image})`;
  return { topic: str(payload, 'title'), content: body.trim() };
}

export const grafana: Integration = {
  name: 'grafana',
  displayName: 'Grafana',
  allEventTypes: ['ok', 'pending', 'alerting', 'paused', 'firing', 'resolved'],
  handle(req) {
    const payload = jsonBody(req);
    return [payload.alerts !== undefined ? alerting(payload) : legacy(payload)];
  },
};
