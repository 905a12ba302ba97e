// The short rules of each game and of 6 nimmt!'s variants, in German and English, for the
// rules pages (#/rules/<ruleset>[/<preset>]). The binding reading is shared/spec/RULES.md;
// these are that reading in plain sentences for a new player. Owns no state.
import type { Preset, Ruleset } from "../../typescript/src/index.ts";
import { lang, type Lang } from "./i18n";

/** A rules page: a ruleset, and for 6 nimmt! a variant other than the standard game. */
export interface RulesRef {
  ruleset: Ruleset;
  preset: Exclude<Preset, "standard"> | null;
}

/** Every rules page, in the order of the index. */
export const RULES_PAGES: RulesRef[] = [
  { ruleset: "6-nimmt", preset: null },
  { ruleset: "6-nimmt", preset: "taktik" },
  { ruleset: "6-nimmt", preset: "logik" },
  { ruleset: "6-nimmt", preset: "profi" },
  { ruleset: "11-nimmt", preset: null },
  { ruleset: "x-nimmt", preset: null },
  { ruleset: "nimm-oder-schieb", preset: null },
];

/** A page's route parts: `6-nimmt`, `6-nimmt/profi`, … */
export function rulesPath(r: RulesRef): string[] {
  return r.preset ? ["rules", r.ruleset, r.preset] : ["rules", r.ruleset];
}

/** The page for a ruleset and preset from a route or a form (standard and unknown ones: the game's page). */
export function rulesRef(ruleset: string, preset?: string | null): RulesRef | null {
  const p = ruleset === "6-nimmt" && preset && preset !== "standard" ? preset : null;
  return RULES_PAGES.find((r) => r.ruleset === ruleset && r.preset === p) ?? null;
}

/**
 * The variant a game's options make (the game view carries options, not the preset's name):
 * `null` for the standard game and for combinations no preset has.
 */
export function presetOf(o: { deck?: string | null; deal?: string | null; placement?: string | null }): RulesRef["preset"] {
  const { deck, deal, placement } = o;
  if (deck === "tactical" && deal === "random" && placement === "right") return "taktik";
  if (deck === "tactical" && deal === "draft" && placement === "right") return "logik";
  if (deck === "full" && deal === "random" && placement === "both_ends") return "profi";
  return null;
}

export interface Section {
  heading: string;
  paragraphs: string[];
}

export interface RulesText {
  /** The game's (and variant's) name, as the index and the page's heading show it. */
  name: string;
  /** One line: players and cards. */
  lead: string;
  sections: Section[];
}

type SixPart = "goal" | "turn" | "place" | "end";

// --- 6 nimmt! and its variants -------------------------------------------------------------

const six: Record<Lang, Record<SixPart, Section>> = {
  en: {
    goal: {
      heading: "Goal",
      paragraphs: [
        "Take as few bullheads as possible. Every card shows 1 to 7 bullheads, and every card you take counts them against you.",
      ],
    },
    turn: {
      heading: "A turn",
      paragraphs: [
        "Everyone picks one card from their hand, face down, at the same time. You may change your pick until the last player has picked. Then all cards are revealed and placed one at a time, lowest first.",
      ],
    },
    place: {
      heading: "Placing and taking",
      paragraphs: [
        "Four rows start with one card each. A card always goes to the right end of the row whose last card is the highest one below it. You never choose the row.",
        "A row holds five cards: the sixth card takes the five, and it starts the row anew.",
        "If a card is lower than the last card of every row, its player picks any row and takes it; the card starts that row. Your own card is never taken.",
      ],
    },
    end: {
      heading: "Scoring and the end",
      paragraphs: [
        "Bullheads: 55 has 7; 11, 22, … 99 have 5; 10, 20, … 100 have 3; 5, 15, … 95 have 2; every other card has 1.",
        "A round is 10 turns. Then everyone adds the bullheads they took to their total. The game ends after the round in which someone reaches 66 points (or the limit or number of rounds the table chose). The lowest total wins; equal lowest totals share the win.",
      ],
    },
  },
  de: {
    goal: {
      heading: "Ziel",
      paragraphs: [
        "Nimm so wenige Hornochsen wie möglich. Jede Karte zeigt 1 bis 7 Hornochsen, und jede Karte, die du nimmst, zählt sie als Minuspunkte.",
      ],
    },
    turn: {
      heading: "Ein Zug",
      paragraphs: [
        "Alle wählen gleichzeitig und verdeckt eine Karte aus ihrer Hand. Du kannst deine Wahl ändern, bis der letzte Spieler gewählt hat. Dann werden alle Karten aufgedeckt und eine nach der anderen angelegt, die niedrigste zuerst.",
      ],
    },
    place: {
      heading: "Anlegen und Nehmen",
      paragraphs: [
        "Vier Reihen beginnen mit je einer Karte. Eine Karte kommt immer rechts an die Reihe, deren letzte Karte am nächsten unter ihr liegt. Die Reihe kannst du dir nicht aussuchen.",
        "Eine Reihe fasst fünf Karten: Die sechste Karte nimmt die fünf und beginnt die Reihe neu.",
        "Ist eine Karte niedriger als die letzte Karte jeder Reihe, sucht sich ihr Spieler eine Reihe aus und nimmt sie; die Karte beginnt diese Reihe neu. Die eigene Karte nimmt man nie mit.",
      ],
    },
    end: {
      heading: "Wertung und Spielende",
      paragraphs: [
        "Hornochsen: die 55 hat 7; 11, 22, … 99 haben 5; 10, 20, … 100 haben 3; 5, 15, … 95 haben 2; alle anderen Karten haben 1.",
        "Eine Runde hat 10 Züge. Danach zählt jeder die genommenen Hornochsen zu seiner Summe. Das Spiel endet nach der Runde, in der jemand 66 Punkte erreicht (oder die Grenze oder Rundenzahl, die der Tisch gewählt hat). Die niedrigste Summe gewinnt; bei Gleichstand teilen sich alle mit der niedrigsten Summe den Sieg.",
      ],
    },
  },
};

const profiPlace: Record<Lang, Section> = {
  en: {
    heading: "Placing and taking",
    paragraphs: [
      "Four rows start with one card each and always ascend from left to right. A card goes either to the right end of a row (after a lower last card) or to the left end (before a higher first card): whichever end is closest to it, the right end on a tie. You never choose.",
      "A row holds five cards: the sixth card, at either end, takes the five and starts the row anew.",
      "If a card fits at no end (it lies between the first and last card of every row), its player picks any row and takes it; the card starts that row. Your own card is never taken.",
    ],
  },
  de: {
    heading: "Anlegen und Nehmen",
    paragraphs: [
      "Vier Reihen beginnen mit je einer Karte und steigen immer von links nach rechts. Eine Karte kommt rechts an eine Reihe (nach einer niedrigeren letzten Karte) oder links (vor eine höhere erste Karte): an das Ende, das ihr am nächsten ist, bei Gleichstand rechts. Aussuchen kannst du es nicht.",
      "Eine Reihe fasst fünf Karten: Die sechste Karte nimmt die fünf, an welchem Ende auch immer, und beginnt die Reihe neu.",
      "Passt eine Karte an kein Ende (sie liegt bei jeder Reihe zwischen erster und letzter Karte), sucht sich ihr Spieler eine Reihe aus und nimmt sie; die Karte beginnt diese Reihe neu. Die eigene Karte nimmt man nie mit.",
    ],
  },
};

const variantWord: Record<Lang, { diff: string; taktik: string; logik: string; profi: string }> = {
  en: { diff: "What is different", taktik: "Tactics (Taktik)", logik: "Logic (Logik)", profi: "Pro (Profi)" },
  de: { diff: "Was anders ist", taktik: "Taktik-Variante", logik: "Logik-Variante", profi: "Profi-Variante" },
};

const sixLead: Record<Lang, { full: string; tactical: string }> = {
  en: {
    full: "2 to 10 players, cards 1 to 104, 10 cards each per round.",
    tactical: "2 to 10 players, cards 1 to 10 × players + 4, 10 cards each per round.",
  },
  de: {
    full: "2 bis 10 Spieler, Karten 1 bis 104, je 10 Karten pro Runde.",
    tactical: "2 bis 10 Spieler, Karten 1 bis 10 × Spielerzahl + 4, je 10 Karten pro Runde.",
  },
};

const sixDiff: Record<Lang, Record<"taktik" | "logik" | "profi", string[]>> = {
  en: {
    taktik: [
      "Only the cards 1 to 10 × players + 4 are used: 1 to 34 with three players. So every card is in play, 10 in each hand and 4 starting the rows, and you can work out which cards the others hold.",
      "Everything else is as in 6 nimmt!.",
    ],
    logik: [
      "As in the Tactics variant, only the cards 1 to 10 × players + 4 are used.",
      "Nothing is dealt: at the start of a round all cards lie face up, and the players take one card at a time in seat order until everyone holds 10. The 4 cards left start the rows. The first seat picks first in round 1, the next seat in round 2, and so on.",
      "The rest is played as in 6 nimmt!.",
    ],
    profi: [
      "All 104 cards are shuffled and dealt as usual, but a card may also go to the left end of a row, in front of a higher first card. The card goes to the closest end; it still never gets to choose.",
    ],
  },
  de: {
    taktik: [
      "Es werden nur die Karten 1 bis 10 × Spielerzahl + 4 benutzt: zu dritt 1 bis 34. So ist jede Karte im Spiel, je 10 auf jeder Hand und 4 als Reihenanfang, und du kannst ausrechnen, welche Karten die anderen halten.",
      "Alles andere ist wie bei 6 nimmt!.",
    ],
    logik: [
      "Wie bei der Taktik-Variante werden nur die Karten 1 bis 10 × Spielerzahl + 4 benutzt.",
      "Es wird nicht verteilt: Zu Rundenbeginn liegen alle Karten offen aus, und reihum nimmt sich jeder eine Karte, bis alle 10 halten. Die 4 übrigen Karten beginnen die Reihen. In Runde 1 wählt der erste Platz zuerst, in Runde 2 der nächste und so weiter.",
      "Der Rest wird wie bei 6 nimmt! gespielt.",
    ],
    profi: [
      "Alle 104 Karten werden wie üblich gemischt und verteilt, aber eine Karte darf auch links an eine Reihe, vor eine höhere erste Karte. Die Karte kommt an das nächstgelegene Ende; aussuchen kann man es weiterhin nicht.",
    ],
  },
};

function sixNimmt(l: Lang, preset: RulesRef["preset"]): RulesText {
  const s = six[l];
  const base = [s.goal, s.turn, preset === "profi" ? profiPlace[l] : s.place, s.end];
  if (!preset) return { name: "6 nimmt!", lead: sixLead[l].full, sections: base };
  return {
    name: `6 nimmt! – ${variantWord[l][preset]}`,
    lead: preset === "profi" ? sixLead[l].full : sixLead[l].tactical,
    sections: [{ heading: variantWord[l].diff, paragraphs: sixDiff[l][preset] }, ...base],
  };
}

// --- the other games ------------------------------------------------------------------------

const others: Record<Lang, Record<Exclude<Ruleset, "6-nimmt">, RulesText>> = {
  en: {
    "11-nimmt": {
      name: "11 nimmt!",
      lead: "2 to 9 players, cards 1 to 100, 10 cards each per round.",
      sections: [
        {
          heading: "What is different from 6 nimmt!",
          paragraphs: [
            "The cards go from 1 to 100 and carry 1 to 5 bullheads: the 55 has 5, not 7. At most 9 players. Otherwise it is played exactly like 6 nimmt!. (The published Amigo game of this name plays differently; this is the game as our rule sheet describes it.)",
          ],
        },
        { heading: "Goal", paragraphs: ["Take as few bullheads as possible; every card you take counts against you."] },
        six.en.turn,
        six.en.place,
        {
          heading: "Scoring and the end",
          paragraphs: [
            "Bullheads: 11, 22, … 99 have 5; 10, 20, … 100 have 3; 5, 15, … 95 have 2; every other card has 1.",
            "A round is 10 turns; then everyone adds the bullheads they took to their total. The game ends after the round in which someone reaches 66 points (or the limit or number of rounds the table chose). The lowest total wins; equal lowest totals share the win.",
          ],
        },
      ],
    },
    "x-nimmt": {
      name: "X nimmt!",
      lead: "2 to 4 players, cards 1 to 100, 8 cards each per deal.",
      sections: [
        {
          heading: "Goal",
          paragraphs: [
            "End each deal with few bullheads in your hand and on your X stack. Bullheads are as in 6 nimmt! (1 to 7 per card).",
          ],
        },
        {
          heading: "A turn",
          paragraphs: [
            "As in 6 nimmt!: everyone picks a card face down at the same time, then the cards are revealed and placed one at a time, lowest first.",
          ],
        },
        {
          heading: "Placing and taking",
          paragraphs: [
            "There are three rows, for 3, 4 and 5 cards, each started with one card. A card goes to the row whose last card is the highest one below it. The card that fills a row takes the cards lying there (2, 3 or 4) and starts the row anew. A card lower than every row's last card takes a row of its player's choice.",
          ],
        },
        {
          heading: "Your X row",
          paragraphs: [
            "When you take cards, you choose one of them for your X row (with a single card this happens by itself). If it is higher than your X row's last card, or the X row is empty, it is added. Otherwise your whole X row goes face down onto your X stack and the chosen card starts a new X row. All other cards you took go into your hand, to be played again.",
          ],
        },
        {
          heading: "Scoring and the end",
          paragraphs: [
            "A deal ends after the turn in which someone plays their last hand card. Your score: the bullheads in your hand plus twice the bullheads in your X stack; the X row counts nothing. Usually two deals are played; the lowest total wins.",
          ],
        },
      ],
    },
    "nimm-oder-schieb": {
      name: "Nimm oder schieb",
      lead: "3 to 7 players, 33 cards worth 3 to 35, chips.",
      sections: [
        {
          heading: "Goal",
          paragraphs: [
            "Every card you take counts its value against you, every chip you keep counts one point for you. The lowest score wins.",
          ],
        },
        {
          heading: "Cards and chips",
          paragraphs: [
            "♣ 3 to K are worth 3 to 13, ♦ A to K 14 to 26, ♥ A to 9 27 to 35. Each game 9 cards are removed unseen (shown at the end); the other 24 are the draw pile. Everyone gets 11 chips (9 with six players, 7 with seven).",
          ],
        },
        {
          heading: "A turn",
          paragraphs: [
            "One card lies open. On your turn you either pass: pay one chip onto the card, and the next player decides; or take it with all the chips on it, turn up the next card and decide again. Without chips you must take.",
          ],
        },
        {
          heading: "Scoring and the end",
          paragraphs: [
            "The game ends when the last card is taken. Add up your cards, but a run of consecutive values counts only its lowest card (runs go across suits: K♣ 13, A♦ 14). Subtract your chips. Example: 6, 8 9 10, 13 14 15, 23 24, 33 and 6 chips make 6 + 8 + 13 + 23 + 33 − 6 = 77.",
            "The lowest score wins; on a tie, the one with more chips; still tied, they share the win. Chip counts are hidden unless the table chose open chips. In a match of several games the scores are added.",
          ],
        },
      ],
    },
  },
  de: {
    "11-nimmt": {
      name: "11 nimmt!",
      lead: "2 bis 9 Spieler, Karten 1 bis 100, je 10 Karten pro Runde.",
      sections: [
        {
          heading: "Was anders ist als bei 6 nimmt!",
          paragraphs: [
            "Die Karten gehen von 1 bis 100 und tragen 1 bis 5 Hornochsen: die 55 hat 5, nicht 7. Höchstens 9 Spieler. Sonst wird genau wie 6 nimmt! gespielt. (Das gleichnamige Spiel von Amigo spielt sich anders; dies ist das Spiel, wie unser Regelblatt es beschreibt.)",
          ],
        },
        { heading: "Ziel", paragraphs: ["Nimm so wenige Hornochsen wie möglich; jede genommene Karte zählt gegen dich."] },
        six.de.turn,
        six.de.place,
        {
          heading: "Wertung und Spielende",
          paragraphs: [
            "Hornochsen: 11, 22, … 99 haben 5; 10, 20, … 100 haben 3; 5, 15, … 95 haben 2; alle anderen Karten haben 1.",
            "Eine Runde hat 10 Züge; danach zählt jeder die genommenen Hornochsen zu seiner Summe. Das Spiel endet nach der Runde, in der jemand 66 Punkte erreicht (oder die Grenze oder Rundenzahl, die der Tisch gewählt hat). Die niedrigste Summe gewinnt; bei Gleichstand teilen sich alle mit der niedrigsten Summe den Sieg.",
          ],
        },
      ],
    },
    "x-nimmt": {
      name: "X nimmt!",
      lead: "2 bis 4 Spieler, Karten 1 bis 100, je 8 Karten pro Durchgang.",
      sections: [
        {
          heading: "Ziel",
          paragraphs: [
            "Beende jeden Durchgang mit wenig Hornochsen auf der Hand und auf deinem X-Stapel. Die Hornochsen sind wie bei 6 nimmt! (1 bis 7 pro Karte).",
          ],
        },
        {
          heading: "Ein Zug",
          paragraphs: [
            "Wie bei 6 nimmt!: Alle wählen gleichzeitig verdeckt eine Karte, dann werden die Karten aufgedeckt und eine nach der anderen angelegt, die niedrigste zuerst.",
          ],
        },
        {
          heading: "Anlegen und Nehmen",
          paragraphs: [
            "Es gibt drei Reihen, für 3, 4 und 5 Karten, jede mit einer Karte begonnen. Eine Karte kommt an die Reihe, deren letzte Karte am nächsten unter ihr liegt. Die Karte, die eine Reihe füllt, nimmt die dort liegenden Karten (2, 3 oder 4) und beginnt die Reihe neu. Eine Karte, die niedriger ist als jede letzte Karte, nimmt eine Reihe nach Wahl ihres Spielers.",
          ],
        },
        {
          heading: "Deine X-Reihe",
          paragraphs: [
            "Wenn du Karten nimmst, wählst du eine davon für deine X-Reihe (bei nur einer Karte geschieht das von selbst). Ist sie höher als die letzte Karte deiner X-Reihe oder ist die X-Reihe leer, wird sie angelegt. Sonst kommt die ganze X-Reihe verdeckt auf deinen X-Stapel und die gewählte Karte beginnt eine neue X-Reihe. Alle anderen genommenen Karten kommen auf deine Hand und werden wieder ausgespielt.",
          ],
        },
        {
          heading: "Wertung und Spielende",
          paragraphs: [
            "Ein Durchgang endet nach dem Zug, in dem jemand seine letzte Handkarte spielt. Deine Wertung: die Hornochsen auf deiner Hand plus doppelt die Hornochsen in deinem X-Stapel; die X-Reihe zählt nichts. Meist werden zwei Durchgänge gespielt; die niedrigste Summe gewinnt.",
          ],
        },
      ],
    },
    "nimm-oder-schieb": {
      name: "Nimm oder schieb",
      lead: "3 bis 7 Spieler, 33 Karten mit den Werten 3 bis 35, Chips.",
      sections: [
        {
          heading: "Ziel",
          paragraphs: [
            "Jede Karte, die du nimmst, zählt ihren Wert gegen dich, jeder Chip, den du behältst, einen Punkt für dich. Die niedrigste Punktzahl gewinnt.",
          ],
        },
        {
          heading: "Karten und Chips",
          paragraphs: [
            "♣ 3 bis K zählen 3 bis 13, ♦ A bis K 14 bis 26, ♥ A bis 9 27 bis 35. In jedem Spiel werden 9 Karten ungesehen entfernt (am Ende gezeigt); die übrigen 24 sind der Ziehstapel. Jeder bekommt 11 Chips (9 zu sechst, 7 zu siebt).",
          ],
        },
        {
          heading: "Ein Zug",
          paragraphs: [
            "Eine Karte liegt offen. Bist du dran, schiebst du sie entweder weiter: Du legst einen Chip auf die Karte, und der Nächste entscheidet. Oder du nimmst sie mit allen Chips darauf, deckst die nächste Karte auf und entscheidest gleich wieder. Ohne Chips musst du nehmen.",
          ],
        },
        {
          heading: "Wertung und Spielende",
          paragraphs: [
            "Das Spiel endet, wenn die letzte Karte genommen ist. Zähl deine Karten zusammen, aber eine Folge aufeinanderfolgender Werte zählt nur ihre niedrigste Karte (Folgen gehen über die Farben: K♣ 13, A♦ 14). Zieh deine Chips ab. Beispiel: 6, 8 9 10, 13 14 15, 23 24, 33 und 6 Chips ergeben 6 + 8 + 13 + 23 + 33 − 6 = 77.",
            "Die niedrigste Punktzahl gewinnt; bei Gleichstand, wer mehr Chips hat; ist auch das gleich, teilen sie sich den Sieg. Die Chips sind verdeckt, außer der Tisch hat offene Chips gewählt. Bei mehreren Spielen werden die Punkte zusammengezählt.",
          ],
        },
      ],
    },
  },
};

/** The text of a rules page in the current (or the given) language. */
export function rulesText(r: RulesRef, l: Lang = lang.get()): RulesText {
  return r.ruleset === "6-nimmt" ? sixNimmt(l, r.preset) : others[l][r.ruleset];
}
