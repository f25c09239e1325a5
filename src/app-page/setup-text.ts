import { languageOf } from './page-text';

/**
 * The guided setup's and the lines list's words in the portal's language, as page-text.ts has the page's:
 * one flat dictionary per language, each language typed to have every key. Plain words: a setting's name
 * appears only as a small "stored as" hint. `{name}` marks what the page fills in.
 */
const en = {
  setupLink: 'Set up step by step',
  allSettings: 'All settings',
  setupTitle: 'Set up the phone system',
  stepOf: 'Step {n} of 5',
  welcome:
    'Connect your phone system in a few steps: the bridge then sends every call to the CRM. Nothing here needs the PBX engineer for more than a few clicks.',
  whichSystem: 'Which phone system do you have?',
  sysFreepbx: 'FreePBX or Asterisk',
  sysFreeswitch: 'FreeSWITCH',
  sys3cx: '3CX',
  sysYeastar: 'Yeastar',
  sysOther: 'Another that can post events',
  onPbx: 'First, on the PBX',
  thenHere: 'Then, here',
  pbxAddress: "The PBX's address",
  pbxAddressHelp: 'Its host name or IP address, as the bridge reaches it.',
  port: 'Port',
  portHelpAmi: 'The manager port: 5038 (5039 when encrypted).',
  portHelpEsl: 'The event socket port: 8021.',
  tls: 'The connection is encrypted (TLS)',
  amiUser: "The manager user's name",
  amiUserHelp: 'As created on the PBX in the step above.',
  amiPassword: "The manager user's password",
  eslPassword: 'The event socket password',
  passwordHelp: 'As set on the PBX in the step above.',
  passwordKeep: 'Leave empty to keep the stored password.',
  cdrTitle: 'Optional: the call records database (CDR)',
  cdrHelp:
    'With it, calls that ended while the bridge was not connected are still reported. Leave both empty to skip.',
  cdrUser: 'Database user',
  cdrUserHelp: "A user that may read the table cdr, on the PBX's own database server (port 3306).",
  cdrPassword: "The database user's password",
  cdrName: 'Database name',
  cdrNameHelp: "FreePBX's is asteriskcdrdb.",
  clickQuestion: "Should clicking a number in the CRM ring the employee's phone?",
  yes: 'Yes',
  no: 'No',
  clickHelpAmi: 'Yes: the manager user also needs the "originate" write right.',
  clickHelpEsl: 'Yes: the same event socket places the calls.',
  saveAndTest: 'Save and test',
  storedAs: 'stored as {name}',
  bridgeAddress:
    'The PBX will see the bridge at {address} (the address this page came from). Check it with whoever runs your network: behind NAT it is another one.',
  freepbxGui: 'FreePBX: Settings › Asterisk Manager Users › Add Manager',
  freepbxName: 'Manager name: {user}. Manager secret: a long password of your choice.',
  freepbxPermit: 'Deny: 0.0.0.0/0.0.0.0. Permit: {permit}.',
  freepbxRights: 'Tick these rights, nothing else:',
  rightsRead: 'Read',
  rightsWrite: 'Write',
  originateNote: 'originate: only for click-to-call',
  freepbxApply: 'Submit, then Apply Config.',
  asteriskConf: 'Plain Asterisk: add this to /etc/asterisk/manager.conf, then run "manager reload":',
  fsConf:
    'In autoload_configs/event_socket.conf.xml (then "reload mod_event_socket"), with a password of your choice:',
  fsAcl: 'In autoload_configs/acl.conf.xml, a list that lets the bridge in (then "reloadacl"):',
  urlsTitle: 'Paste this on the PBX',
  createPbxToken: 'Create the PBX token',
  tokenShownOnce:
    'The new PBX token is in the text below, shown this once: copy it to the PBX now. It is stored only as a fingerprint.',
  tokenPlaceholderNote: 'YOUR_PBX_TOKEN: press "Create the PBX token" first.',
  tokensFromEnv:
    'This deployment takes the PBX tokens of its environment: ask its operator for one and put it where the text says YOUR_PBX_TOKEN.',
  yeastarSteps:
    'Yeastar P-Series web portal: Integrations › API: enable the API and, in its advanced settings, Call Status Monitor for the trunks and extensions. Tick Webhook Event Push and add a webhook, method POST, events 30011, 30012, 30013 and 30014, URL:',
  threecxSteps:
    '3CX Admin Console: Integrations › CRM, tab Server Side, Add: upload the bridge\'s CRM template (ask its operator), choose "PBX-CRM Bridge", turn on Enable Call Journaling, and set:',
  threecxUrl: 'Bridge URL',
  threecxToken: 'PBX token',
  otherSteps:
    'A PBX that can post events sends each call event as JSON to this address, with the token in the Authorization header:',
  next: 'Next',
  back: 'Back',
  nextLines: 'Next: the lines',
  testTitle: 'Test',
  testOk: "The PBX answered and accepted the bridge's login. Its calls now reach the CRM.",
  testLoginRefused:
    "The PBX answered but refused the login: the user name or the password is wrong, or the PBX does not permit the bridge's address ({address}).",
  checkLoginAmi:
    'Check in FreePBX (Settings › Asterisk Manager Users) the name and the secret, and that Permit names {address}; then Apply Config. Type the password here again.',
  checkLoginEsl:
    'Check the password in event_socket.conf.xml and reload mod_event_socket; type it here again.',
  testUnreachable: 'No PBX answered at {target} within 5 seconds.',
  checkUnreachable:
    "Check the address and the port; that the PBX's firewall lets {address} in on that port; that the PBX lets the bridge's address in (FreeSWITCH: apply-inbound-acl; Asterisk: permit). A wrong address, a closed port and a refused address all look the same from here.",
  testNotAllowed:
    "This deployment may not reach {target}: a private or local address. Give the PBX's public address, or ask the bridge's operator.",
  testLimited: 'Too many tests for this portal: try again in {s} s.',
  ledgerOk: 'The call records database answered too.',
  ledgerFailed: 'The call records database did not: {reason}',
  technical: 'Details',
  testAgain: 'Test again',
  changeAnswers: 'Change the answers',
  noConnection: 'Nothing is set up to test yet.',
  fixMarked: 'Nothing was saved: fix what is marked.',
  linesTitle: 'Lines',
  linesIntro:
    "Every number of your company is a line: name it and say what its calls do. The counts are today's calls.",
  linesNone: "No line yet: call one of your company's numbers now, then read again.",
  lineCallsToday: "today's calls: {n}",
  lineName: 'Name',
  lineCrmCreate: 'Unknown callers become leads',
  lineSource: 'Lead source (its id in the CRM, e.g. CALL)',
  lineDefaultUser: 'Employee for calls nobody took',
  lineReport: 'Send its calls to the CRM',
  lineMissedTask: 'A task for every missed call',
  lineAsAll: 'as for every line',
  saveLine: 'Save the line',
  lineSaved: 'The line is saved.',
  unlined: 'Calls without a line today: {n}',
  readAgain: 'Read again',
  done: 'Done',
  doneTitle: 'Done: the bridge is set up',
  doneIntro: "Today's calls arrive here as the PBX reports them: read again to see new ones.",
  doneNoCalls: 'No call yet today: make one to your company now.',
  toOverview: 'Go to the overview',
};

export type SetupText = typeof en;

const de: SetupText = {
  setupLink: 'Schritt für Schritt einrichten',
  allSettings: 'Alle Einstellungen',
  setupTitle: 'Telefonanlage einrichten',
  stepOf: 'Schritt {n} von 5',
  welcome:
    'Verbinden Sie Ihre Telefonanlage in wenigen Schritten: Danach meldet die Brücke jeden Anruf an das CRM. Der Techniker der Anlage wird nur für ein paar Klicks gebraucht.',
  whichSystem: 'Welche Telefonanlage haben Sie?',
  sysFreepbx: 'FreePBX oder Asterisk',
  sysFreeswitch: 'FreeSWITCH',
  sys3cx: '3CX',
  sysYeastar: 'Yeastar',
  sysOther: 'Eine andere, die Ereignisse senden kann',
  onPbx: 'Zuerst an der Telefonanlage',
  thenHere: 'Dann hier',
  pbxAddress: 'Adresse der Telefonanlage',
  pbxAddressHelp: 'Ihr Hostname oder ihre IP-Adresse, wie die Brücke sie erreicht.',
  port: 'Port',
  portHelpAmi: 'Der Manager-Port: 5038 (verschlüsselt 5039).',
  portHelpEsl: 'Der Event-Socket-Port: 8021.',
  tls: 'Die Verbindung ist verschlüsselt (TLS)',
  amiUser: 'Name des Manager-Benutzers',
  amiUserHelp: 'Wie im Schritt oben an der Anlage angelegt.',
  amiPassword: 'Passwort des Manager-Benutzers',
  eslPassword: 'Passwort des Event-Sockets',
  passwordHelp: 'Wie im Schritt oben an der Anlage gesetzt.',
  passwordKeep: 'Leer lassen, um das gespeicherte Passwort zu behalten.',
  cdrTitle: 'Optional: die Datenbank der Anrufdaten (CDR)',
  cdrHelp:
    'Damit werden auch Anrufe gemeldet, die endeten, während die Brücke nicht verbunden war. Beide Felder leer lassen, um das zu überspringen.',
  cdrUser: 'Datenbankbenutzer',
  cdrUserHelp:
    'Ein Benutzer, der die Tabelle cdr lesen darf, auf dem Datenbankserver der Anlage (Port 3306).',
  cdrPassword: 'Passwort des Datenbankbenutzers',
  cdrName: 'Name der Datenbank',
  cdrNameHelp: 'Bei FreePBX: asteriskcdrdb.',
  clickQuestion: 'Soll ein Klick auf eine Nummer im CRM das Telefon des Mitarbeiters klingeln lassen?',
  yes: 'Ja',
  no: 'Nein',
  clickHelpAmi: 'Ja: Der Manager-Benutzer braucht dann auch das Schreibrecht „originate“.',
  clickHelpEsl: 'Ja: Derselbe Event-Socket baut die Anrufe auf.',
  saveAndTest: 'Speichern und testen',
  storedAs: 'gespeichert als {name}',
  bridgeAddress:
    'Die Anlage sieht die Brücke unter {address} (die Adresse, von der diese Seite kam). Prüfen Sie das mit Ihrer Netzwerkbetreuung: hinter NAT ist es eine andere.',
  freepbxGui: 'FreePBX: Settings › Asterisk Manager Users › Add Manager',
  freepbxName: 'Manager name: {user}. Manager secret: ein langes Passwort Ihrer Wahl.',
  freepbxPermit: 'Deny: 0.0.0.0/0.0.0.0. Permit: {permit}.',
  freepbxRights: 'Diese Rechte ankreuzen, sonst keine:',
  rightsRead: 'Lesen (Read)',
  rightsWrite: 'Schreiben (Write)',
  originateNote: 'originate: nur für Klick-zum-Anrufen',
  freepbxApply: 'Submit, dann Apply Config.',
  asteriskConf:
    'Reines Asterisk: dies in /etc/asterisk/manager.conf ergänzen, dann „manager reload“ ausführen:',
  fsConf:
    'In autoload_configs/event_socket.conf.xml (dann „reload mod_event_socket“), mit einem Passwort Ihrer Wahl:',
  fsAcl: 'In autoload_configs/acl.conf.xml eine Liste, die die Brücke hereinlässt (dann „reloadacl“):',
  urlsTitle: 'Dies an der Telefonanlage eintragen',
  createPbxToken: 'Das Anlagen-Token erstellen',
  tokenShownOnce:
    'Das neue Anlagen-Token steht im Text unten und wird nur dieses eine Mal gezeigt: jetzt in die Anlage kopieren. Gespeichert wird nur ein Fingerabdruck.',
  tokenPlaceholderNote: 'YOUR_PBX_TOKEN: zuerst „Das Anlagen-Token erstellen“ drücken.',
  tokensFromEnv:
    'Diese Installation nimmt die Anlagen-Tokens aus ihrer Umgebung: Fragen Sie ihren Betreiber nach einem und setzen Sie es dort ein, wo YOUR_PBX_TOKEN steht.',
  yeastarSteps:
    'Yeastar-P-Series-Weboberfläche: Integrations › API: die API einschalten und in den erweiterten Einstellungen Call Status Monitor für Leitungen und Nebenstellen. Webhook Event Push ankreuzen und einen Webhook anlegen, Methode POST, Ereignisse 30011, 30012, 30013 und 30014, URL:',
  threecxSteps:
    '3CX-Verwaltungskonsole: Integrations › CRM, Reiter Server Side, Add: die CRM-Vorlage der Brücke hochladen (beim Betreiber erfragen), „PBX-CRM Bridge“ wählen, Enable Call Journaling einschalten und setzen:',
  threecxUrl: 'Bridge URL',
  threecxToken: 'PBX token',
  otherSteps:
    'Eine Anlage, die Ereignisse senden kann, schickt jedes Anrufereignis als JSON an diese Adresse, mit dem Token im Authorization-Header:',
  next: 'Weiter',
  back: 'Zurück',
  nextLines: 'Weiter: die Leitungen',
  testTitle: 'Test',
  testOk:
    'Die Anlage hat geantwortet und die Anmeldung der Brücke angenommen. Ihre Anrufe erreichen jetzt das CRM.',
  testLoginRefused:
    'Die Anlage hat geantwortet, aber die Anmeldung abgelehnt: Benutzername oder Passwort sind falsch, oder die Anlage erlaubt die Adresse der Brücke ({address}) nicht.',
  checkLoginAmi:
    'Prüfen Sie in FreePBX (Settings › Asterisk Manager Users) Namen und Secret und dass Permit {address} nennt; dann Apply Config. Geben Sie das Passwort hier erneut ein.',
  checkLoginEsl:
    'Prüfen Sie das Passwort in event_socket.conf.xml, laden Sie mod_event_socket neu und geben Sie es hier erneut ein.',
  testUnreachable: 'Unter {target} hat binnen 5 Sekunden keine Anlage geantwortet.',
  checkUnreachable:
    'Prüfen Sie Adresse und Port; dass die Firewall der Anlage {address} auf diesem Port hereinlässt; dass die Anlage die Adresse der Brücke zulässt (FreeSWITCH: apply-inbound-acl; Asterisk: permit). Eine falsche Adresse, ein geschlossener Port und eine abgewiesene Adresse sehen von hier gleich aus.',
  testNotAllowed:
    'Diese Installation darf {target} nicht erreichen: eine private oder lokale Adresse. Geben Sie die öffentliche Adresse der Anlage an oder fragen Sie den Betreiber der Brücke.',
  testLimited: 'Zu viele Tests für dieses Portal: in {s} s erneut versuchen.',
  ledgerOk: 'Die Datenbank der Anrufdaten hat auch geantwortet.',
  ledgerFailed: 'Die Datenbank der Anrufdaten nicht: {reason}',
  technical: 'Einzelheiten',
  testAgain: 'Erneut testen',
  changeAnswers: 'Angaben ändern',
  noConnection: 'Noch ist nichts zum Testen eingerichtet.',
  fixMarked: 'Nichts wurde gespeichert: Korrigieren Sie das Markierte.',
  linesTitle: 'Leitungen',
  linesIntro:
    'Jede Nummer Ihres Unternehmens ist eine Leitung: Geben Sie ihr einen Namen und legen Sie fest, was mit ihren Anrufen geschieht. Gezählt werden die heutigen Anrufe.',
  linesNone: 'Noch keine Leitung: Rufen Sie jetzt eine Nummer Ihres Unternehmens an und lesen Sie dann neu.',
  lineCallsToday: 'heutige Anrufe: {n}',
  lineName: 'Name',
  lineCrmCreate: 'Unbekannte Anrufer werden Leads',
  lineSource: 'Lead-Quelle (ihre ID im CRM, z. B. CALL)',
  lineDefaultUser: 'Mitarbeiter für Anrufe, die niemand annahm',
  lineReport: 'Anrufe an das CRM melden',
  lineMissedTask: 'Eine Aufgabe für jeden verpassten Anruf',
  lineAsAll: 'wie für alle Leitungen',
  saveLine: 'Leitung speichern',
  lineSaved: 'Die Leitung ist gespeichert.',
  unlined: 'Anrufe ohne Leitung heute: {n}',
  readAgain: 'Neu lesen',
  done: 'Fertig',
  doneTitle: 'Fertig: Die Brücke ist eingerichtet',
  doneIntro:
    'Die heutigen Anrufe erscheinen hier, sobald die Anlage sie meldet: neu lesen, um neue zu sehen.',
  doneNoCalls: 'Heute noch kein Anruf: Rufen Sie jetzt Ihr Unternehmen an.',
  toOverview: 'Zur Übersicht',
};

const ru: SetupText = {
  setupLink: 'Настроить по шагам',
  allSettings: 'Все настройки',
  setupTitle: 'Подключение АТС',
  stepOf: 'Шаг {n} из 5',
  welcome:
    'Подключите АТС за несколько шагов: после этого мост передаёт каждый звонок в CRM. Инженер АТС нужен лишь на пару щелчков.',
  whichSystem: 'Какая у вас АТС?',
  sysFreepbx: 'FreePBX или Asterisk',
  sysFreeswitch: 'FreeSWITCH',
  sys3cx: '3CX',
  sysYeastar: 'Yeastar',
  sysOther: 'Другая, умеющая отправлять события',
  onPbx: 'Сначала на АТС',
  thenHere: 'Затем здесь',
  pbxAddress: 'Адрес АТС',
  pbxAddressHelp: 'Имя хоста или IP-адрес, по которому мост её достигает.',
  port: 'Порт',
  portHelpAmi: 'Порт менеджера: 5038 (5039 с шифрованием).',
  portHelpEsl: 'Порт event socket: 8021.',
  tls: 'Соединение шифруется (TLS)',
  amiUser: 'Имя пользователя менеджера',
  amiUserHelp: 'Как создано на АТС в шаге выше.',
  amiPassword: 'Пароль пользователя менеджера',
  eslPassword: 'Пароль event socket',
  passwordHelp: 'Как задано на АТС в шаге выше.',
  passwordKeep: 'Оставьте пустым, чтобы сохранить прежний пароль.',
  cdrTitle: 'Необязательно: база записей о звонках (CDR)',
  cdrHelp:
    'С ней передаются и звонки, завершившиеся, пока мост не был подключён. Оставьте оба поля пустыми, чтобы пропустить.',
  cdrUser: 'Пользователь базы',
  cdrUserHelp:
    'Пользователь, которому можно читать таблицу cdr, на сервере баз данных самой АТС (порт 3306).',
  cdrPassword: 'Пароль пользователя базы',
  cdrName: 'Имя базы',
  cdrNameHelp: 'У FreePBX: asteriskcdrdb.',
  clickQuestion: 'Должен ли щелчок по номеру в CRM вызывать телефон сотрудника?',
  yes: 'Да',
  no: 'Нет',
  clickHelpAmi: 'Да: пользователю менеджера нужно ещё право записи «originate».',
  clickHelpEsl: 'Да: звонки создаёт тот же event socket.',
  saveAndTest: 'Сохранить и проверить',
  storedAs: 'хранится как {name}',
  bridgeAddress:
    'АТС увидит мост по адресу {address} (адрес, с которого пришла эта страница). Уточните у того, кто ведёт вашу сеть: за NAT он другой.',
  freepbxGui: 'FreePBX: Settings › Asterisk Manager Users › Add Manager',
  freepbxName: 'Manager name: {user}. Manager secret: длинный пароль на ваш выбор.',
  freepbxPermit: 'Deny: 0.0.0.0/0.0.0.0. Permit: {permit}.',
  freepbxRights: 'Отметьте эти права, и больше никаких:',
  rightsRead: 'Чтение (Read)',
  rightsWrite: 'Запись (Write)',
  originateNote: 'originate: только для звонков по щелчку',
  freepbxApply: 'Submit, затем Apply Config.',
  asteriskConf: 'Чистый Asterisk: добавьте это в /etc/asterisk/manager.conf и выполните «manager reload»:',
  fsConf:
    'В autoload_configs/event_socket.conf.xml (затем «reload mod_event_socket»), с паролем на ваш выбор:',
  fsAcl: 'В autoload_configs/acl.conf.xml список, пропускающий мост (затем «reloadacl»):',
  urlsTitle: 'Вставьте это в АТС',
  createPbxToken: 'Создать токен АТС',
  tokenShownOnce:
    'Новый токен АТС стоит в тексте ниже и показан только один раз: скопируйте его в АТС сейчас. Хранится лишь его отпечаток.',
  tokenPlaceholderNote: 'YOUR_PBX_TOKEN: сначала нажмите «Создать токен АТС».',
  tokensFromEnv:
    'Эта установка берёт токены АТС из своего окружения: попросите токен у её оператора и вставьте его вместо YOUR_PBX_TOKEN.',
  yeastarSteps:
    'Веб-интерфейс Yeastar P-Series: Integrations › API: включите API, а в его расширенных настройках Call Status Monitor для линий и внутренних номеров. Отметьте Webhook Event Push и добавьте вебхук, метод POST, события 30011, 30012, 30013 и 30014, URL:',
  threecxSteps:
    'Консоль 3CX: Integrations › CRM, вкладка Server Side, Add: загрузите CRM-шаблон моста (спросите у оператора), выберите «PBX-CRM Bridge», включите Enable Call Journaling и задайте:',
  threecxUrl: 'Bridge URL',
  threecxToken: 'PBX token',
  otherSteps:
    'АТС, умеющая отправлять события, шлёт каждое событие звонка в JSON на этот адрес, с токеном в заголовке Authorization:',
  next: 'Далее',
  back: 'Назад',
  nextLines: 'Далее: линии',
  testTitle: 'Проверка',
  testOk: 'АТС ответила и приняла вход моста. Её звонки теперь попадают в CRM.',
  testLoginRefused:
    'АТС ответила, но отказала во входе: неверны имя пользователя или пароль, либо АТС не разрешает адрес моста ({address}).',
  checkLoginAmi:
    'Проверьте во FreePBX (Settings › Asterisk Manager Users) имя и secret и что Permit называет {address}; затем Apply Config. Введите пароль здесь ещё раз.',
  checkLoginEsl:
    'Проверьте пароль в event_socket.conf.xml, перезагрузите mod_event_socket и введите его здесь ещё раз.',
  testUnreachable: 'По адресу {target} за 5 секунд не ответила ни одна АТС.',
  checkUnreachable:
    'Проверьте адрес и порт; что межсетевой экран АТС пропускает {address} на этот порт; что АТС пускает адрес моста (FreeSWITCH: apply-inbound-acl; Asterisk: permit). Неверный адрес, закрытый порт и отклонённый адрес отсюда выглядят одинаково.',
  testNotAllowed:
    'Этой установке нельзя обращаться к {target}: это частный или локальный адрес. Укажите публичный адрес АТС или спросите оператора моста.',
  testLimited: 'Слишком много проверок для этого портала: повторите через {s} с.',
  ledgerOk: 'База записей о звонках тоже ответила.',
  ledgerFailed: 'База записей о звонках не ответила: {reason}',
  technical: 'Подробности',
  testAgain: 'Проверить снова',
  changeAnswers: 'Изменить ответы',
  noConnection: 'Проверять пока нечего.',
  fixMarked: 'Ничего не сохранено: исправьте отмеченное.',
  linesTitle: 'Линии',
  linesIntro:
    'Каждый номер вашей компании — это линия: назовите её и решите, что делать с её звонками. Счётчики — звонки за сегодня.',
  linesNone: 'Линий пока нет: позвоните сейчас на один из номеров компании и обновите страницу.',
  lineCallsToday: 'звонков сегодня: {n}',
  lineName: 'Название',
  lineCrmCreate: 'Неизвестные звонящие становятся лидами',
  lineSource: 'Источник лида (его ID в CRM, напр. CALL)',
  lineDefaultUser: 'Сотрудник для звонков, которые никто не принял',
  lineReport: 'Передавать её звонки в CRM',
  lineMissedTask: 'Задача на каждый пропущенный звонок',
  lineAsAll: 'как для всех линий',
  saveLine: 'Сохранить линию',
  lineSaved: 'Линия сохранена.',
  unlined: 'Звонков без линии сегодня: {n}',
  readAgain: 'Обновить',
  done: 'Готово',
  doneTitle: 'Готово: мост настроен',
  doneIntro:
    'Сегодняшние звонки появляются здесь, как только АТС о них сообщает: обновите, чтобы увидеть новые.',
  doneNoCalls: 'Сегодня звонков ещё не было: позвоните сейчас в компанию.',
  toOverview: 'К обзору',
};

const TEXTS: Record<string, SetupText> = { en, de, ru };

/** The setup's words for `lang` (as `languageOf` reads it; anything else: English). */
export function setupTextFor(lang: string): SetupText {
  return TEXTS[languageOf(lang)];
}

/** `text` with each `{name}` filled from `values`. */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (all, name: string) => (name in values ? String(values[name]) : all));
}
