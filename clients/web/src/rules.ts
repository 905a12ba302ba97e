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
  /** One line: players and cards (a variant's page says what differs instead). */
  lead: string | null;
  sections: Section[];
}

type SixPart = "goal" | "turn" | "place" | "end";

// --- 6 nimmt! and its variants -------------------------------------------------------------

const six: Record<Lang, Record<SixPart, Section>> = {
  en: {
    goal: {
      heading: "Goal",
      paragraphs: ["Take as few bullheads as possible: every card you take counts its bullheads (1 to 7) against you."],
    },
    turn: {
      heading: "A turn",
      paragraphs: [
        "Everyone picks a hand card face down at the same time (you may change it until the last player has picked). Then all are revealed and placed one by one, lowest first.",
      ],
    },
    place: {
      heading: "Placing and taking",
      paragraphs: [
        "Four rows start with one card each. A card goes to the right end of the row whose last card is closest below it; nobody chooses.",
        "A row holds five: the sixth card takes the five and starts the row anew. A card lower than every row's end takes a row of its player's choice and starts it anew. Your own card is never taken.",
      ],
    },
    end: {
      heading: "Scoring and the end",
      paragraphs: [
        "Bullheads: 55 has 7; 11, 22 … 99 have 5; 10, 20 … 100 have 3; 5, 15 … 95 have 2; all others 1.",
        "After 10 turns everyone adds the bullheads they took to their total. The game ends after the round in which someone reaches 66 points (or the chosen limit). The lowest total wins; a tie shares the win.",
      ],
    },
  },
  de: {
    goal: {
      heading: "Ziel",
      paragraphs: ["Nimm so wenige Hornochsen wie möglich: Jede Karte, die du nimmst, zählt ihre Hornochsen (1 bis 7) gegen dich."],
    },
    turn: {
      heading: "Ein Zug",
      paragraphs: [
        "Alle wählen gleichzeitig verdeckt eine Handkarte (ändern geht, bis der Letzte gewählt hat). Dann werden alle aufgedeckt und einzeln angelegt, die niedrigste zuerst.",
      ],
    },
    place: {
      heading: "Anlegen und Nehmen",
      paragraphs: [
        "Vier Reihen beginnen mit je einer Karte. Eine Karte kommt rechts an die Reihe, deren letzte Karte am nächsten unter ihr liegt; aussuchen kann das niemand.",
        "Eine Reihe fasst fünf: Die sechste Karte nimmt die fünf und beginnt die Reihe neu. Eine Karte, die niedriger ist als jedes Reihenende, nimmt eine Reihe nach Wahl ihres Spielers und beginnt sie neu. Die eigene Karte nimmt man nie mit.",
      ],
    },
    end: {
      heading: "Wertung und Spielende",
      paragraphs: [
        "Hornochsen: die 55 hat 7; 11, 22 … 99 haben 5; 10, 20 … 100 haben 3; 5, 15 … 95 haben 2; alle anderen 1.",
        "Nach 10 Zügen zählt jeder seine genommenen Hornochsen zu seiner Summe. Das Spiel endet nach der Runde, in der jemand 66 Punkte erreicht (oder die gewählte Grenze). Die niedrigste Summe gewinnt; Gleichstand teilt den Sieg.",
      ],
    },
  },
};

const profiPlace: Record<Lang, Section> = {
  en: {
    heading: "Placing and taking",
    paragraphs: [
      "Four rows start with one card each and ascend from left to right. A card goes to the closest end: the right end after a lower last card, or the left end before a higher first card; the right end on a tie. Nobody chooses.",
      "A row holds five: the sixth card, at either end, takes the five and starts the row anew. A card that fits at no end takes a row of its player's choice and starts it anew. Your own card is never taken.",
    ],
  },
  de: {
    heading: "Anlegen und Nehmen",
    paragraphs: [
      "Vier Reihen beginnen mit je einer Karte und steigen von links nach rechts. Eine Karte kommt an das nächste Ende: rechts nach einer niedrigeren letzten Karte oder links vor eine höhere erste Karte; bei Gleichstand rechts. Aussuchen kann das niemand.",
      "Eine Reihe fasst fünf: Die sechste Karte, an welchem Ende auch immer, nimmt die fünf und beginnt die Reihe neu. Eine Karte, die an kein Ende passt, nimmt eine Reihe nach Wahl ihres Spielers und beginnt sie neu. Die eigene Karte nimmt man nie mit.",
    ],
  },
};

const variantWord: Record<Lang, { diff: string; taktik: string; logik: string; profi: string }> = {
  en: { diff: "What is different", taktik: "Tactics (Taktik)", logik: "Logic (Logik)", profi: "Pro (Profi)" },
  de: { diff: "Was anders ist", taktik: "Taktik-Variante", logik: "Logik-Variante", profi: "Profi-Variante" },
};

const sixLead: Record<Lang, string> = {
  en: "2 to 10 players, cards 1 to 104, 10 cards each per round.",
  de: "2 bis 10 Spieler, Karten 1 bis 104, je 10 pro Runde.",
};

const sixDiff: Record<Lang, Record<"taktik" | "logik" | "profi", string[]>> = {
  en: {
    taktik: [
      "Only the cards 1 to 10 × players + 4 are used (1 to 34 with three players), so every card is in play and you can work out which cards the others hold.",
    ],
    logik: [
      "Only the cards 1 to 10 × players + 4 are used, and nothing is dealt: all cards lie face up and the players take one at a time in seat order until everyone holds 10. The 4 cards left start the rows. Each round the next seat picks first.",
    ],
    profi: ["All 104 cards are dealt as usual, but a card may also go to the left end of a row, in front of a higher first card."],
  },
  de: {
    taktik: [
      "Es werden nur die Karten 1 bis 10 × Spielerzahl + 4 benutzt (zu dritt 1 bis 34). So ist jede Karte im Spiel, und du kannst ausrechnen, welche Karten die anderen halten.",
    ],
    logik: [
      "Es werden nur die Karten 1 bis 10 × Spielerzahl + 4 benutzt, und es wird nicht verteilt: Alle Karten liegen offen aus, und reihum nimmt sich jeder eine, bis alle 10 halten. Die 4 übrigen Karten beginnen die Reihen. Jede Runde wählt der nächste Platz zuerst.",
    ],
    profi: ["Alle 104 Karten werden wie üblich verteilt, aber eine Karte darf auch links an eine Reihe, vor eine höhere erste Karte."],
  },
};

function sixNimmt(l: Lang, preset: RulesRef["preset"]): RulesText {
  const s = six[l];
  const base = [s.goal, s.turn, preset === "profi" ? profiPlace[l] : s.place, s.end];
  if (!preset) return { name: "6 nimmt!", lead: sixLead[l], sections: base };
  return {
    name: `6 nimmt! – ${variantWord[l][preset]}`,
    lead: null,
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
            "Cards 1 to 100 with 1 to 5 bullheads (the 55 has 5, not 7). At most 9 players. Otherwise it is played exactly like 6 nimmt!. (Amigo's published game of this name plays differently.)",
          ],
        },
        { heading: "Goal", paragraphs: ["Take as few bullheads as possible; every card you take counts against you."] },
        six.en.turn,
        six.en.place,
        {
          heading: "Scoring and the end",
          paragraphs: [
            "Bullheads: 11, 22 … 99 have 5; 10, 20 … 100 have 3; 5, 15 … 95 have 2; all others 1.",
            six.en.end.paragraphs[1] as string,
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
            "When you take cards, you choose one of them for your X row (a single card goes there by itself). If it is higher than the X row's last card, or the X row is empty, it is added; otherwise your whole X row goes face down onto your X stack and the card starts a new one. The other cards you took go into your hand.",
          ],
        },
        {
          heading: "Scoring and the end",
          paragraphs: [
            "A deal ends after a turn at whose end someone has no cards in hand. Your score: the bullheads in your hand plus twice the bullheads in your X stack; the X row counts nothing. Usually two deals are played; the lowest total wins.",
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
            "Values: ♣\u00a03–\u2060K\u00a0=\u00a03–\u206013, ♦\u00a0A–\u2060K\u00a0=\u00a014–\u206026, ♥\u00a0A–\u20609\u00a0=\u00a027–\u206035. Each game 9 cards are removed unseen (shown at the end); the other 24 are the draw pile. Everyone gets 11 chips (9 with six players, 7 with seven).",
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
            "The lowest score wins; on a tie, the one with more chips; still tied, they share the win. Chip counts are hidden unless the table chose open chips. Several games in a match are added up.",
          ],
        },
      ],
    },
  },
  de: {
    "11-nimmt": {
      name: "11 nimmt!",
      lead: "2 bis 9 Spieler, Karten 1 bis 100, je 10 pro Runde.",
      sections: [
        {
          heading: "Was anders ist als bei 6 nimmt!",
          paragraphs: [
            "Karten 1 bis 100 mit 1 bis 5 Hornochsen (die 55 hat 5, nicht 7). Höchstens 9 Spieler. Sonst wird genau wie 6 nimmt! gespielt. (Das gleichnamige Spiel von Amigo spielt sich anders.)",
          ],
        },
        { heading: "Ziel", paragraphs: ["Nimm so wenige Hornochsen wie möglich; jede genommene Karte zählt gegen dich."] },
        six.de.turn,
        six.de.place,
        {
          heading: "Wertung und Spielende",
          paragraphs: [
            "Hornochsen: 11, 22 … 99 haben 5; 10, 20 … 100 haben 3; 5, 15 … 95 haben 2; alle anderen 1.",
            six.de.end.paragraphs[1] as string,
          ],
        },
      ],
    },
    "x-nimmt": {
      name: "X nimmt!",
      lead: "2 bis 4 Spieler, Karten 1 bis 100, je 8 pro Durchgang.",
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
            "Nimmst du Karten, wählst du eine davon für deine X-Reihe (bei nur einer von selbst). Ist sie höher als die letzte Karte der X-Reihe oder die X-Reihe leer, wird sie angelegt; sonst kommt die ganze X-Reihe verdeckt auf deinen X-Stapel, und die Karte beginnt eine neue. Die anderen genommenen Karten kommen auf deine Hand.",
          ],
        },
        {
          heading: "Wertung und Spielende",
          paragraphs: [
            "Ein Durchgang endet nach einem Zug, an dessen Ende jemand keine Handkarte mehr hat. Wertung: die Hornochsen auf deiner Hand plus doppelt die Hornochsen in deinem X-Stapel; die X-Reihe zählt nichts. Meist spielt man zwei Durchgänge; die niedrigste Summe gewinnt.",
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
            "Werte: ♣\u00a03–\u2060K\u00a0=\u00a03–\u206013, ♦\u00a0A–\u2060K\u00a0=\u00a014–\u206026, ♥\u00a0A–\u20609\u00a0=\u00a027–\u206035. In jedem Spiel werden 9 Karten ungesehen entfernt (am Ende gezeigt); die übrigen 24 sind der Ziehstapel. Jeder bekommt 11 Chips (9 zu sechst, 7 zu siebt).",
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
            "Die niedrigste Punktzahl gewinnt; bei Gleichstand, wer mehr Chips hat; sonst teilt man den Sieg. Chips sind verdeckt, außer der Tisch wählt offene Chips. Mehrere Spiele werden zusammengezählt.",
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
