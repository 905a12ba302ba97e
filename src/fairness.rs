//! Fair shuffles: a documented, pinned shuffle from a secret per-game seed.
//!
//! At creation the server draws a 32-byte seed from the operating system's generator and
//! publishes `commitment = hex(SHA-256(seed))`. The deal of round `r` (1-based) is the deck
//! in ascending order, shuffled by Fisher–Yates with ChaCha20 seeded by
//! `SHA-256("stammtisch/deal/v1" ‖ seed ‖ r as u16 big-endian)`:
//! for `i` from `n−1` down to 1, draw `j` uniformly in `0..=i` (rejection sampling on
//! `next_u32`, dropping draws at or above the largest multiple of `i+1`) and swap `i` and `j`.
//! Seat 0 gets the first ten cards, seat 1 the next ten, …, and the next four start rows 0–3.
//! The seed is revealed when the game finishes, so anyone can re-derive every deal.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

use rules::{Card, Dealer};

/// Domain separation for deal seeds.
const DEAL_DOMAIN: &[u8] = b"stammtisch/deal/v1";

/// A fresh secret seed, hex-encoded.
#[must_use]
pub fn new_seed() -> String {
    let mut seed = [0u8; 32];
    rand::rng().fill_bytes(&mut seed);
    hex::encode(seed)
}

/// Hex SHA-256 of the seed's decoded bytes.
#[must_use]
pub fn commitment(seed_hex: &str) -> String {
    let bytes = hex::decode(seed_hex).unwrap_or_default();
    hex::encode(Sha256::digest(bytes))
}

/// The dealer of one game, shuffling from its seed.
pub struct SeededDealer {
    seed: Vec<u8>,
}

impl SeededDealer {
    /// A dealer for the hex `seed` of a game.
    #[must_use]
    pub fn new(seed_hex: &str) -> Self {
        Self {
            seed: hex::decode(seed_hex).unwrap_or_default(),
        }
    }
}

/// Uniform draw in `0..bound` without modulo bias.
fn uniform(rng: &mut ChaCha20Rng, bound: u32) -> u32 {
    let zone = u32::MAX - (u32::MAX % bound);
    loop {
        let x = rng.next_u32();
        if x < zone {
            return x % bound;
        }
    }
}

impl Dealer for SeededDealer {
    fn shuffle(&mut self, round: u16, cards: &mut [Card]) {
        let mut hasher = Sha256::new();
        hasher.update(DEAL_DOMAIN);
        hasher.update(&self.seed);
        hasher.update(round.to_be_bytes());
        let mut rng = ChaCha20Rng::from_seed(hasher.finalize().into());
        for i in (1..cards.len()).rev() {
            let bound = u32::try_from(i + 1).unwrap_or(u32::MAX);
            let j = uniform(&mut rng, bound) as usize;
            cards.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn deck() -> Vec<Card> {
        (1..=104).map(|n| Card::new(n).unwrap()).collect()
    }

    #[test]
    fn the_same_seed_and_round_give_the_same_deal() {
        let seed = new_seed();
        let (mut a, mut b) = (deck(), deck());
        SeededDealer::new(&seed).shuffle(1, &mut a);
        SeededDealer::new(&seed).shuffle(1, &mut b);
        assert_eq!(a, b);
        let mut c = deck();
        SeededDealer::new(&seed).shuffle(2, &mut c);
        assert_ne!(a, c, "rounds get different deals");
    }

    #[test]
    fn the_shuffle_is_pinned() {
        // Golden value: changing the algorithm breaks every published game's verification.
        let mut cards = deck();
        SeededDealer::new(&"00".repeat(32)).shuffle(1, &mut cards);
        let first: Vec<u8> = cards.iter().take(5).map(|c| c.number()).collect();
        assert_eq!(first, GOLDEN_FIRST_FIVE);
    }

    const GOLDEN_FIRST_FIVE: [u8; 5] = [92, 48, 15, 19, 78];

    #[test]
    fn commitment_is_sha256_of_the_seed_bytes() {
        assert_eq!(
            commitment("00"),
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
        );
    }
}
