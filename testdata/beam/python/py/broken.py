# A function file with a mistake on its fourth line.

def total(row):
    return row.price * row.qty +
