package strategies

// TurnStreak is turnStreak, for the fleet tests of package strategies_test.
const TurnStreak = turnStreak
