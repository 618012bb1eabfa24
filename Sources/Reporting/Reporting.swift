import Ledger
