// What a new organization starts with, after the reference's realm creation
// and onboarding (feature level ~419): three default channels, and Welcome
// Bot's first conversations in them. The words are ours; the channels, topics
// and their order are the reference's (its "Zulip" channel is "Confab" here).

export const CONFAB_CHANNEL = 'Confab';
export const SANDBOX_CHANNEL = 'sandbox';
/** Also where new channels and server updates are announced. */
export const GENERAL_CHANNEL = 'general';

export const INITIAL_CHANNELS = [
  { name: CONFAB_CHANNEL, description: 'Questions and discussion about using Confab.' },
  { name: SANDBOX_CHANNEL, description: 'Experiment with Confab here. :test_tube:' },
  { name: GENERAL_CHANNEL, description: 'For team-wide conversations' },
];

export const WELCOME_TOPIC = 'welcome to Confab!';
export const GREETINGS_TOPIC = 'greetings';

export interface InitialMessage {
  channel: string;
  topic: string;
  content: string;
}

const topic = (channel: string, name: string, contents: string[]): InitialMessage[] => contents.map((content) => ({ channel, topic: name, content }));

/** In sending order: the last ones are the most visible (newest first in recent views). */
export const INITIAL_MESSAGES: InitialMessage[] = [
  ...topic(CONFAB_CHANNEL, 'moving messages', [
    'Something in the wrong place? You can move messages to another topic, rename a topic, split one in two, or move a whole topic to another channel.',
    ':point_right: Try it: move this message to another topic, then back.',
  ]),
  ...topic(SANDBOX_CHANNEL, 'experiments', [
    ':point_right: This topic is for trying out how messages can be formatted.',
    [
      '```spoiler A few examples',
      '',
      '````python',
      'print("a code block")',
      '````',
      '',
      '- a bulleted',
      '- list',
      '',
      `A link to a conversation: #**${CONFAB_CHANNEL}>${WELCOME_TOPIC}**`,
      '',
      '```',
    ].join('\n'),
  ]),
  ...topic(SANDBOX_CHANNEL, 'start a conversation', [
    'A conversation starts in a channel, under a topic: pick a channel in the left sidebar and start a new topic there.',
    'Name the topic for what you want to talk about, as if finishing the sentence “Can we talk about…?”',
    ':point_right: Try it: start a new conversation in this channel.',
  ]),
  ...topic(GENERAL_CHANNEL, GREETINGS_TOPIC, [
    'This **greetings** topic is the place to say hello :wave: to everyone.',
    ':point_right: Click a message to reply in the same conversation.',
  ]),
  ...topic(CONFAB_CHANNEL, WELCOME_TOPIC, [
    `Conversations in Confab are labeled with topics, which say what each one is about. This message, for example, is in the “${WELCOME_TOPIC}” topic of the #**${CONFAB_CHANNEL}** channel.`,
    'You can read one conversation at a time, each message in its context, however many others are going on.',
    ':point_right: When you are ready, have a look at your other unread conversations.',
  ]),
];

/** Welcome Bot waves at the first greeting, as the reference does. */
export const WAVE = { emoji_name: 'wave', message: INITIAL_MESSAGES.find((m) => m.topic === GREETINGS_TOPIC)! };
