/**
 * The page's words added with single mode's editable page and the calls list (merged into page-text.ts's
 * dictionaries: one block per language here too).
 */
export const moreEn = {
  environmentDefault: "the environment's",
  tokenFromEnv: 'from the environment (PBX_TOKENS): remove it there',
  wrongAdminToken: "That is not this bridge's admin token (ADMIN_TOKEN).",
  signedInAdminToken: 'Signed in with the admin token',
  signedInAs: 'Signed in as',
  userNumber: 'user {id}',
  pageOffTitle: 'This page is not switched on yet',
  pageOff:
    "The bridge's page needs an admin token to sign in with. Set ADMIN_TOKEN (a long random text) in the bridge's environment — its .env file, or the environment of its container or service — and restart the bridge. Then open this page again and sign in with that token.",
  eventsOnLine: 'The portal events are {mode}; calls are filed under line {line}.',
  eventsNoLine: "The portal events are {mode}; no line is set, so calls go on the portal's default line.",
  eventsOnline: 'posted to the bridge',
  eventsOffline: 'fetched by the bridge',
  eventsWebhook: "posted to the bridge by the portal's outgoing webhook",
  eventsBoundCount: '{n} bound',
  time: 'Time',
  direction: 'Direction',
  number: 'Number',
  duration: 'Duration',
  inbound: 'incoming',
  outbound: 'outgoing',
  inProgress: 'in progress',
  progress: 'in progress',
  anonymous: 'withheld number',
  callIdSmall: 'call id',
};

export type MoreText = typeof moreEn;

export const moreDe: MoreText = {
  environmentDefault: 'aus der Umgebung',
  tokenFromEnv: 'aus der Umgebung (PBX_TOKENS): dort entfernen',
  wrongAdminToken: 'Das ist nicht das Admin-Token dieser Brücke (ADMIN_TOKEN).',
  signedInAdminToken: 'Angemeldet mit dem Admin-Token',
  signedInAs: 'Angemeldet als',
  userNumber: 'Benutzer {id}',
  pageOffTitle: 'Diese Seite ist noch nicht eingeschaltet',
  pageOff:
    'Die Seite der Brücke braucht ein Admin-Token zum Anmelden. Setzen Sie ADMIN_TOKEN (ein langer zufälliger Text) in der Umgebung der Brücke — ihrer .env-Datei oder der Umgebung ihres Containers oder Dienstes — und starten Sie die Brücke neu. Öffnen Sie dann diese Seite erneut und melden Sie sich mit diesem Token an.',
  eventsOnLine: 'Die Portal-Ereignisse werden {mode}; Anrufe werden unter der Leitung {line} abgelegt.',
  eventsNoLine:
    'Die Portal-Ereignisse werden {mode}; keine Leitung ist gesetzt, Anrufe gehen auf die Standardleitung des Portals.',
  eventsOnline: 'an die Brücke gesendet',
  eventsOffline: 'von der Brücke abgeholt',
  eventsWebhook: 'vom ausgehenden Webhook des Portals an die Brücke gesendet',
  eventsBoundCount: '{n} gebunden',
  time: 'Zeit',
  direction: 'Richtung',
  number: 'Nummer',
  duration: 'Dauer',
  inbound: 'eingehend',
  outbound: 'ausgehend',
  inProgress: 'läuft',
  progress: 'läuft',
  anonymous: 'unterdrückte Nummer',
  callIdSmall: 'Anruf-ID',
};

export const moreRu: MoreText = {
  environmentDefault: 'из окружения',
  tokenFromEnv: 'из окружения (PBX_TOKENS): удаляется там',
  wrongAdminToken: 'Это не токен администратора этого моста (ADMIN_TOKEN).',
  signedInAdminToken: 'Вход выполнен с токеном администратора',
  signedInAs: 'Вход выполнен:',
  userNumber: 'пользователь {id}',
  pageOffTitle: 'Эта страница ещё не включена',
  pageOff:
    'Странице моста нужен токен администратора для входа. Задайте ADMIN_TOKEN (длинный случайный текст) в окружении моста — в его файле .env или в окружении его контейнера или службы — и перезапустите мост. Затем откройте эту страницу снова и войдите с этим токеном.',
  eventsOnLine: 'События портала {mode}; звонки относятся к линии {line}.',
  eventsNoLine: 'События портала {mode}; линия не задана, звонки идут на линию портала по умолчанию.',
  eventsOnline: 'присылаются мосту',
  eventsOffline: 'забираются мостом',
  eventsWebhook: 'присылаются мосту исходящим вебхуком портала',
  eventsBoundCount: 'подписок: {n}',
  time: 'Время',
  direction: 'Направление',
  number: 'Номер',
  duration: 'Длительность',
  inbound: 'входящий',
  outbound: 'исходящий',
  inProgress: 'идёт',
  progress: 'идёт',
  anonymous: 'скрытый номер',
  callIdSmall: 'id звонка',
};
