// What the widget says, per language; a site may replace any of it (settings.strings).
export interface Strings {
  defaultTitle: string;
  openChat: string;
  closeChat: string;
  message: string;
  placeholder: string;
  send: string;
  attachFile: string;
  messages: string;
  unread: (count: number) => string;
  sending: string;
  notSent: string;
  retry: string;
  /** Drops a message refused for good (a file too large, of a refused kind). */
  remove: string;
  seen: string;
  offline: string;
  reconnecting: string;
  typing: (name: string) => string;
  agentFallback: string;
  you: string;
  loadingOlder: string;
  startOfConversation: string;
  uploadFailed: string;
  fileTooLarge: string;
  /** Too many files sent lately (the upload quota of the device or the conversation). */
  uploadLimit: string;
  fileTypeRefused: string;
  download: string;
  /** The panel's prompt while the conversation is empty and the account has no welcome message. */
  emptyPrompt: string;
  /** The same outside business hours, when the hours notice above says when the team is back. */
  emptyPromptClosed: string;
  /** The label of an agent message's row of cards (a carousel), which scrolls sideways. */
  cards: string;
  /** The panel's message when Palaver refuses this page for good (see unavailable.ts). */
  unavailable: string;
}

const en: Strings = {
  defaultTitle: 'Chat with us',
  openChat: 'Open chat',
  closeChat: 'Close chat',
  message: 'Message',
  placeholder: 'Write a message…',
  send: 'Send',
  attachFile: 'Attach file',
  messages: 'Messages',
  unread: (n) => (n === 1 ? '1 unread message' : `${n} unread messages`),
  sending: 'Sending…',
  notSent: 'Not sent.',
  retry: 'Retry',
  remove: 'Remove',
  seen: 'Seen',
  offline: 'You are offline. Messages will be sent when the connection is back.',
  reconnecting: 'Connection lost. Reconnecting…',
  typing: (name) => `${name} is typing…`,
  agentFallback: 'Agent',
  you: 'You',
  loadingOlder: 'Loading earlier messages…',
  startOfConversation: 'Start of the conversation',
  uploadFailed: 'The file could not be sent.',
  fileTooLarge: 'The file is too large.',
  uploadLimit: 'You have sent many files lately. Try again later.',
  fileTypeRefused: 'This kind of file cannot be sent.',
  download: 'Download',
  emptyPrompt: "Send us a message and we'll get back to you here.",
  emptyPromptClosed: "Send us a message and we'll answer when we're back.",
  cards: 'Options: scroll sideways for more',
  unavailable: 'Sorry, the chat is not available at the moment.',
};

const nl: Strings = {
  defaultTitle: 'Chat met ons',
  openChat: 'Chat openen',
  closeChat: 'Chat sluiten',
  message: 'Bericht',
  placeholder: 'Schrijf een bericht…',
  send: 'Versturen',
  attachFile: 'Bestand bijvoegen',
  messages: 'Berichten',
  unread: (n) => (n === 1 ? '1 ongelezen bericht' : `${n} ongelezen berichten`),
  sending: 'Versturen…',
  notSent: 'Niet verstuurd.',
  retry: 'Opnieuw',
  remove: 'Verwijderen',
  seen: 'Gelezen',
  offline: 'Je bent offline. Berichten gaan weg zodra de verbinding terug is.',
  reconnecting: 'Verbinding verbroken. Opnieuw verbinden…',
  typing: (name) => `${name} is aan het typen…`,
  agentFallback: 'Medewerker',
  you: 'Jij',
  loadingOlder: 'Eerdere berichten laden…',
  startOfConversation: 'Begin van het gesprek',
  uploadFailed: 'Het bestand kon niet worden verstuurd.',
  fileTooLarge: 'Het bestand is te groot.',
  uploadLimit: 'Je hebt de laatste tijd veel bestanden gestuurd. Probeer het later opnieuw.',
  fileTypeRefused: 'Dit soort bestand kan niet worden verstuurd.',
  download: 'Downloaden',
  emptyPrompt: 'Stuur ons een bericht, dan reageren we hier.',
  emptyPromptClosed: 'Stuur ons een bericht, dan antwoorden we als we er weer zijn.',
  cards: 'Opties: scroll opzij voor meer',
  unavailable: 'Sorry, de chat is op dit moment niet beschikbaar.',
};

export const STRINGS: Record<string, Strings> = { en, nl };
