# Functions a pipeline calls with path + name.

BONUS = {"red": 10, "blue": 5}


def bonus_for(team):
    return BONUS.get(team, 0)


def final_score(row):
    return row.score + bonus_for(row.team)


def is_winner(row):
    return final_score(row) > 20
