# ns-2.35 side of `netreturn validate-xcp` (python/netreturn/ns2xcp.py).
# A template: ns2xcp.py fills the @...@ fields from the resolved scenario
# (netreturn._native.resolve: every link direction's rate, delay and buffer
# in bytes; load_scenario: the flows). XCP as ns-2.35 ships it: Queue/XCP
# on every XCP link direction, Agent/TCP/Reno/XCP senders,
# Agent/TCPSink/XCPSink sinks (an ACK per segment), ns-2's defaults except
# the lines below, each with its reason.
set ns [new Simulator]
global defaultRNG
$defaultRNG seed @SEED@
set startrng [new RNG]
$startrng seed @SEED@

# Data packets weigh what ours do on the wire (segment + headers + XCP's
# 16 bytes); ns-2 adds 40 bytes of TCP/IP header to packetSize_.
Agent/TCP set packetSize_ @PAYLOAD@
# Never the limit (ours: rcv_buf 64 MB).
Agent/TCP set window_ 1000000
# windowInit_ stays ns-2's default, 2: the reference's end systems as shipped.
# RTT clock of 1 ms, as ours (ns-2's default tick is 10 ms).
Agent/TCP set tcpTick_ 0.001
# The minimum RTO (ns2xcp.py, NS2_VARIANTS): ours (RFC 6298 (2.4): 1 s), or
# ns-2's 0.2 s as shipped. With timestamps (on for XCP senders) ns-2 samples the RTT
# on every ACK, its rttvar collapses and the RTO is srtt + a few ticks: at
# 0.2 s, any queue swing on a path longer than 0.2 s fires a spurious
# timeout (cwnd back to 1, no packet lost; docs/xcp.md).
@MINRTO@
# ACKs weigh what ours do on the wire (ns2xcp.py, NS2_VARIANTS), or ns-2's
# 40 bytes as shipped.
@ACK@
# Further Agent/TCP settings asked for (validate-xcp --ns2-agent).
@AGENT@
# Buffers in bytes, as the scenario gives them.
Queue/DropTail set queue_in_bytes_ true
Queue/DropTail set mean_pktsize_ @PKT@
Queue/DropTail/XCPQ set queue_in_bytes_ true
Queue/DropTail/XCPQ set mean_pktsize_ @PKT@

proc link_dir {a b rate delay limit xcp} {
    global ns node
    if {$xcp} {
        $ns simplex-link $node($a) $node($b) $rate $delay XCP
        set q [[$ns link $node($a) $node($b)] queue]
        $q set-link-capacity $rate
        $q queue-limit $limit
    } else {
        $ns simplex-link $node($a) $node($b) $rate $delay DropTail
        $ns queue-limit $node($a) $node($b) $limit
    }
}

@NODES@
@LINKS@

# One queue monitor per monitored direction: departures, drops and the
# time integral of the backlog, read at the end of start-up and at the end.
set monitored {@MONITORED@}
foreach m $monitored {
    set a [lindex $m 0]; set b [lindex $m 1]
    set qm($a,$b) [$ns monitor-queue $node($a) $node($b) [open /dev/null w] 1000]
}
proc snap {tag} {
    global ns qm monitored
    foreach m $monitored {
        set a [lindex $m 0]; set b [lindex $m 1]
        set bi [$qm($a,$b) get-bytes-integrator]
        $bi newpoint [$ns now] [$qm($a,$b) set size_]
        puts "$tag $a->$b [$qm($a,$b) set pdrops_] [$qm($a,$b) set bdepartures_] [$bi set sum_]"
    }
}

proc flow {i src dst start} {
    global ns node tcp started
    set started($i) $start
    set tcp($i) [new Agent/TCP/Reno/XCP]
    set sink [new Agent/TCPSink/XCPSink]
    $ns attach-agent $node($src) $tcp($i)
    $ns attach-agent $node($dst) $sink
    $ns connect $tcp($i) $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp($i)
    $ns at $start "$ftp start"
}

@FLOWS@

proc finish {} {
    global tcp started
    snap end
    foreach i [lsort -integer [array names tcp]] {
        # nrexmit_: the sender's retransmission timeouts (TcpAgent::timeout)
        puts "flow $i [$tcp($i) set ack_] $started($i) [$tcp($i) set nrexmit_]"
    }
    exit 0
}
$ns at @STARTUP@ "snap startup"
$ns at @STOP@ "finish"
$ns run
