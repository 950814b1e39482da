// What the pre-chat form, the business hours and the email link say, per language (the
// widget's language setting picks them as strings.ts's).

export interface ReachStrings {
  formTitleBefore: string;
  formTitleAfter: string;
  formIntroBefore: string;
  formIntroAfter: string;
  name: string;
  email: string;
  start: string;
  save: string;
  skip: string;
  saving: string;
  nameRequired: string;
  emailInvalid: string;
  saveFailed: string;
  thanks: (email: string) => string;
  away: string;
  backToday: (time: string) => string;
  backTomorrow: (time: string) => string;
  backOn: (day: string, time: string) => string;
  backOnDate: (date: string, time: string) => string;
  notBackSoon: string;
  answerByEmail: (email: string) => string;
  leaveEmail: string;
  repliesInMinutes: (n: number) => string;
  repliesInHours: (n: number) => string;
  repliesInDays: (n: number) => string;
  linkExpired: string;
  signInForLink: string;
}

const en: ReachStrings = {
  formTitleBefore: 'Before we start',
  formTitleAfter: 'Get our answer by email',
  formIntroBefore: 'Tell us how to reach you, in case you leave before we answer.',
  formIntroAfter: 'Leave your email and we will answer there if you have left.',
  name: 'Your name',
  email: 'Your email',
  start: 'Start chatting',
  save: 'Save',
  skip: 'Not now',
  saving: 'Saving…',
  nameRequired: 'Please enter your name.',
  emailInvalid: 'Please enter an email address such as name@example.com.',
  saveFailed: 'That did not work. Please try again.',
  thanks: (email) => `Thanks! If you have left, we will answer at ${email}.`,
  away: 'We are away right now.',
  backToday: (time) => `We're back today at ${time}.`,
  backTomorrow: (time) => `We're back tomorrow at ${time}.`,
  backOn: (day, time) => `We're back ${day} at ${time}.`,
  backOnDate: (date, time) => `We're back on ${date} at ${time}.`,
  notBackSoon: 'We will answer as soon as we can.',
  answerByEmail: (email) => `Leave a message: we will answer by email at ${email}.`,
  leaveEmail: 'Leave your email and a message, and we will answer there.',
  repliesInMinutes: (n) => (n === 1 ? 'Usually replies within a minute' : `Usually replies within ${n} minutes`),
  repliesInHours: (n) => (n === 1 ? 'Usually replies within an hour' : `Usually replies within ${n} hours`),
  repliesInDays: (n) => (n === 1 ? 'Usually replies within a day' : `Usually replies within ${n} days`),
  linkExpired: 'This link has expired. Write to us here and we will pick it up.',
  signInForLink: 'Sign in to see your conversation.',
};

const nl: ReachStrings = {
  formTitleBefore: 'Voor we beginnen',
  formTitleAfter: 'Ons antwoord per e-mail',
  formIntroBefore: 'Laat weten hoe we je bereiken, voor het geval je weg bent voor we antwoorden.',
  formIntroAfter: 'Laat je e-mailadres achter, dan antwoorden we daar als je al weg bent.',
  name: 'Je naam',
  email: 'Je e-mailadres',
  start: 'Begin de chat',
  save: 'Opslaan',
  skip: 'Nu niet',
  saving: 'Opslaan…',
  nameRequired: 'Vul je naam in.',
  emailInvalid: 'Vul een e-mailadres in, zoals naam@voorbeeld.nl.',
  saveFailed: 'Dat lukte niet. Probeer het opnieuw.',
  thanks: (email) => `Bedankt! Ben je weg, dan antwoorden we op ${email}.`,
  away: 'We zijn er nu niet.',
  backToday: (time) => `We zijn er vandaag weer om ${time}.`,
  backTomorrow: (time) => `We zijn er morgen weer om ${time}.`,
  backOn: (day, time) => `We zijn er ${day} weer om ${time}.`,
  backOnDate: (date, time) => `We zijn er op ${date} weer om ${time}.`,
  notBackSoon: 'We antwoorden zo snel mogelijk.',
  answerByEmail: (email) => `Laat een bericht achter: we antwoorden per e-mail op ${email}.`,
  leaveEmail: 'Laat je e-mailadres en een bericht achter, dan antwoorden we daar.',
  repliesInMinutes: (n) => (n === 1 ? 'Antwoordt meestal binnen een minuut' : `Antwoordt meestal binnen ${n} minuten`),
  repliesInHours: (n) => (n === 1 ? 'Antwoordt meestal binnen een uur' : `Antwoordt meestal binnen ${n} uur`),
  repliesInDays: (n) => (n === 1 ? 'Antwoordt meestal binnen een dag' : `Antwoordt meestal binnen ${n} dagen`),
  linkExpired: 'Deze link is verlopen. Schrijf ons hier, dan pakken we het op.',
  signInForLink: 'Log in om je gesprek te zien.',
};

const ALL: Record<string, ReachStrings> = { en, nl };

export function reachStrings(locale: string): ReachStrings {
  return ALL[locale] ?? ALL[locale.split('-')[0] ?? 'en'] ?? en;
}
