// The shapes the widget reads from Palaver: the Client API's envelope and message object (the
// same object in GET /messages and the socket's `message` event).

export interface Envelope<T = unknown> {
  data: T;
  notifications: Array<{ type: string; message: string }>;
  status: 'SUCCESS' | 'ERROR';
  [root: string]: unknown;
}

export interface AgentView {
  id: number;
  name: string;
  avatar: string | null;
  isTyping: number | null;
}

export interface MediaView {
  id: string;
  mimeType: string;
  year: string;
  month: string;
  day: string;
  filename: string;
  description: string | null;
}

export interface ButtonView {
  title: string;
  payload: string;
  type: 'webUrl' | 'phoneNumber' | 'reply';
}

export interface CarouselCard {
  message: string | null;
  title: string | null;
  media: MediaView | null;
  buttons: ButtonView[];
}

export interface ChatMessage {
  id: number;
  time: number;
  message: string | null;
  typeId: number;
  agent: AgentView | null;
  title: string | null;
  media: MediaView | null;
  buttons: ButtonView[];
  quickReplies: string[];
  carousel: CarouselCard[];
  status: number;
}

export const TYPE = { user: 1, agent: 2, info: 3, agentSystem: 5 } as const;

/** An error answer of the Client API: its first notification's code and the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly codes: string[] = [code],
  ) {
    super(code);
    this.name = 'ApiError';
  }
}
