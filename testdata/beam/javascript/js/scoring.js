// Functions for path_and_name.yaml: helpers and top-level constants are allowed.
const BONUS = 10;

function bonus(score) {
  return score >= 10 ? BONUS : 0;
}

function isWinner(row) {
  return row.score >= 10;
}

const finalScore = (row) => row.score + bonus(row.score);
