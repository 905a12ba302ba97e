//! Seats: the lobby (join, leave, bots, removing a seat, the start) and resigning.
//!
//! The same for every game family: this module never reads a board, and starts play by
//! handing over to the family's `Family::deal`.

use crate::error::RuleError;
use crate::game::Game;
use crate::model::{Actor, Awaiting, BotStrategy, Command, Dealer, Event, Seat, Status};
use crate::turn::{Family, Turn};

impl Game {
    /// Who must act in the lobby: the host, to start, once every seat is filled.
    pub(crate) fn lobby_awaiting(&self) -> Vec<Awaiting> {
        if self.seats.iter().all(|s| s.occupant.is_some()) {
            vec![Awaiting {
                seat: self.host_seat,
                action: "start",
            }]
        } else {
            Vec::new()
        }
    }

    /// The lobby commands `account` at `seat` (or not seated) may send.
    pub(crate) fn lobby_legal(&self, seat: Option<u8>, account: &str) -> Vec<Command> {
        let mut legal = Vec::new();
        let free = self
            .seats
            .iter()
            .any(|s| s.occupant.is_none() && s.reserved_for.is_none());
        let kept = self
            .seats
            .iter()
            .any(|s| s.occupant.is_none() && s.reserved_for.as_deref() == Some(account));
        match seat {
            None if free || kept => legal.push(Command::Join {}),
            None => {}
            Some(s) if s == self.host_seat => {
                if free {
                    legal.push(Command::AddBot {
                        strategy: BotStrategy::Random,
                    });
                }
                for (i, other) in self.seats.iter().enumerate() {
                    if i != usize::from(s)
                        && other.occupant.is_some()
                        && let Ok(i) = u8::try_from(i)
                    {
                        legal.push(Command::RemoveSeat { seat: i });
                    }
                }
                if self.seats.iter().all(|s| s.occupant.is_some()) {
                    legal.push(Command::Start {});
                }
            }
            Some(_) => legal.push(Command::Leave {}),
        }
        legal
    }
}

impl<B: Family> Turn<'_, '_, B> {
    /// Decides a lobby command or `resign`.
    pub(crate) fn seat_command(
        &mut self,
        seat: Option<u8>,
        actor: Actor<'_>,
        command: &Command,
        dealer: &mut dyn Dealer,
    ) -> Result<(), RuleError> {
        let g = self.ctx;
        match command {
            Command::Join {} => {
                self.require_lobby()?;
                let Actor::Account { id, .. } = actor else {
                    return Err(RuleError::NotAPlayer);
                };
                if seat.is_some() {
                    return Err(RuleError::AlreadySeated);
                }
                // A seat kept for the account (a rematch), else the first free one nobody
                // keeps.
                let kept = g
                    .seats
                    .iter()
                    .position(|s| s.occupant.is_none() && s.reserved_for.as_deref() == Some(id))
                    .and_then(|i| u8::try_from(i).ok());
                let free = kept
                    .or_else(|| self.free_seat())
                    .ok_or(RuleError::GameFull)?;
                self.emit(Event::SeatTaken {
                    seat: free,
                    account: id.into(),
                });
                let last = g.seats.iter().filter(|s| s.occupant.is_none()).count() == 1;
                if g.auto_start && last {
                    self.emit(Event::GameStarted {});
                    B::deal(self, dealer);
                }
            }
            Command::Leave {} => {
                self.require_lobby()?;
                let seat = seat.ok_or(RuleError::NotAPlayer)?;
                if seat == g.host_seat {
                    return Err(RuleError::HostCannotLeave);
                }
                self.emit(Event::SeatLeft { seat });
            }
            Command::AddBot { strategy } => {
                self.require_lobby()?;
                self.require_host(seat)?;
                let free = self.free_seat().ok_or(RuleError::GameFull)?;
                let name = format!("Bot {}", free + 1);
                self.emit(Event::BotAdded {
                    seat: free,
                    strategy: *strategy,
                    name,
                });
            }
            Command::RemoveSeat { seat: target } => {
                self.require_lobby()?;
                self.require_host(seat)?;
                let occupied = g
                    .seats
                    .get(usize::from(*target))
                    .is_some_and(|s| s.occupant.is_some());
                if !occupied || *target == g.host_seat {
                    return Err(RuleError::InvalidSeat { seat: *target });
                }
                self.emit(Event::SeatRemoved { seat: *target });
            }
            Command::Start {} => {
                self.require_lobby()?;
                self.require_host(seat)?;
                if g.seats.iter().any(|s| s.occupant.is_none()) {
                    return Err(RuleError::SeatsNotFilled);
                }
                self.emit(Event::GameStarted {});
                B::deal(self, dealer);
            }
            Command::Resign {} => {
                if self.progress.status != Status::Active {
                    return Err(RuleError::GameNotActive);
                }
                let seat = seat.ok_or(RuleError::NotAPlayer)?;
                if g.seats
                    .get(usize::from(seat))
                    .is_none_or(Seat::bot_controlled)
                {
                    return Err(RuleError::Resigned);
                }
                self.emit(Event::SeatResigned { seat });
            }
            _ => {
                return Err(RuleError::UnknownCommand {
                    command: command.name(),
                });
            }
        }
        Ok(())
    }

    fn require_lobby(&self) -> Result<(), RuleError> {
        if self.progress.status == Status::Lobby {
            Ok(())
        } else {
            Err(RuleError::NotInLobby)
        }
    }

    fn require_host(&self, seat: Option<u8>) -> Result<(), RuleError> {
        match seat {
            None => Err(RuleError::NotAPlayer),
            Some(s) if s == self.ctx.host_seat => Ok(()),
            Some(_) => Err(RuleError::NotHost),
        }
    }

    /// The first seat nobody sits in or keeps.
    fn free_seat(&self) -> Option<u8> {
        self.ctx
            .seats
            .iter()
            .position(|s| s.occupant.is_none() && s.reserved_for.is_none())
            .and_then(|i| u8::try_from(i).ok())
    }
}
