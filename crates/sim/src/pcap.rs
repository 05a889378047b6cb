//! pcap output (in progress)
